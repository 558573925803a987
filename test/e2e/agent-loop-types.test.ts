/**
 * docs/integrate.md's four agent loops type-check as written, as a user's
 * project would check them (strict, with the SDKs' and the client's types):
 * one program for the four, so the SDKs' declarations are bound and checked
 * once rather than once a file. test/e2e/agent-loops.test.ts and
 * agent-loops-more.test.ts run the same snippets.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docSnippet, typeCheckSnippets } from "../helpers/agent-loops.ts";
import { ROOT } from "../helpers/cli.ts";

const GROUPS = [
  ["openai-chat-loop", "anthropic-messages-loop"],
  ["openai-responses-loop", "ai-sdk-loop"],
] as const;

let folder: string | undefined;
let checked: Promise<string[]> | undefined;

/** What tsc says of each group, from one program over the four snippets. */
function diagnostics(): Promise<string[]> {
  checked ??= (async () => {
    // Inside the repository, so `autocompact/client` resolves (package self-reference).
    const dir = await mkdtemp(join(ROOT, ".agent-loop-types-"));
    folder = dir;
    const groups = await Promise.all(
      GROUPS.map((group) =>
        Promise.all(
          group.map(async (name) => {
            const file = join(dir, `${name}.ts`);
            await writeFile(file, await docSnippet(name));
            return file;
          }),
        ),
      ),
    );
    return typeCheckSnippets(groups);
  })();
  return checked;
}

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe("docs/integrate.md's agent loops type-check as written (strict, with the SDKs' and the client's types)", () => {
  it("openai-chat and anthropic-messages (run by agent-loops.test.ts)", async () => {
    expect((await diagnostics())[0]).toBe("");
  }, 60_000);

  it("openai-responses and ai-sdk (run by agent-loops-more.test.ts)", async () => {
    expect((await diagnostics())[1]).toBe("");
  }, 60_000);
});
