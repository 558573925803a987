import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook } from "./webhook-signature.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NOW = 1_800_000_000;
const BODY = '{"turn":0}';

const verify = (signature: string) =>
  verifyWebhook([SECRET], { id: "msg_1", timestamp: String(NOW), signature }, BODY, NOW);

describe("verifyWebhook", () => {
  it("accepts the signature of the exact body, among other signatures", () => {
    const good = signWebhook(SECRET, "msg_1", NOW, BODY);
    expect(() => verify(good)).not.toThrow();
    expect(() => verify(`v1,bm9wZQ== ${good}`)).not.toThrow();
  });

  it("decodes signatures strictly: junk appended to a valid one is no match", () => {
    const good = signWebhook(SECRET, "msg_1", NOW, BODY);
    for (const tampered of [
      `${good}!!!`,
      `${good}==`,
      `${good} `.trim().replace("v1,", "v1, "),
      `${good}A`,
    ]) {
      expect(() => verify(tampered), tampered).toThrow(
        "no webhook-signature matches: check the signing secret and that the body is sent unchanged",
      );
    }
  });
});
