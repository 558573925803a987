/** `node:crypto` through `require` (infra/node/require.ts says why). */
import type * as Crypto from "node:crypto";
import { requireBuiltin } from "./require.ts";

const crypto = requireBuiltin("node:crypto") as typeof Crypto;
export default crypto;
export const {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  getRandomValues,
  randomBytes,
  randomInt,
  randomUUID,
  sign,
  timingSafeEqual,
} = crypto;
