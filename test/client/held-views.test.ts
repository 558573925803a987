/**
 * The client keeps the view it read last and reads the projection with
 * `since` (issue 28, client/views.ts): what it returns is always what a
 * fresh full read answers, while the bytes on the wire follow the change.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AutocompactClient } from "../../client/index.ts";
import type { Entry } from "../../core/events.ts";
import type { Summarizer } from "../../functions/ports.ts";
import { messageTurn, request, toolCall, toolResult, turnStart } from "../helpers/builders.ts";
import { propertyRuns } from "../helpers/property.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

const URL_BASE = "http://autocompact.test";
const summarizer: Summarizer = {
  summarize: async (asked) => ({ text: `S${asked.events.length}`, model: "stub", latency_ms: 1 }),
};

/** A harness, a client of it whose GETs are recorded (URL and bytes answered), and a client that holds nothing. */
function setUp() {
  const h = harness({ summarizer });
  const gets: { url: string; bytes: number; delta: boolean }[] = [];
  const client = new AutocompactClient({
    url: URL_BASE,
    key: ALICE_KEY,
    fetch: async (input, init) => {
      const answer = await h.app.request(input, init);
      if ((init.method ?? "GET") !== "GET") return answer;
      const text = await answer.text();
      gets.push({ url: input, bytes: Buffer.byteLength(text), delta: text.includes('"delta":') });
      return new Response(text, { status: answer.status, headers: answer.headers });
    },
  });
  const fresh = () =>
    new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (i, init) => h.app.request(i, init),
    });
  return { h, client, gets, fresh };
}

/** Turn `t` with a tool call, whose result some formats join with the next turn's request. */
const toolTurn = (t: number): Entry[] => [
  turnStart(t),
  request(`q${t}`, t),
  toolCall(`c${t}`, "read", {}, t),
  toolResult(`c${t}`, `out${t}`, false, t),
];

describe("AutocompactClient holds the view it read", () => {
  it("asks with since after the first read and returns the whole view", async () => {
    const { client, gets } = setUp();
    await client.postTurn("c", { turn: 0, events: messageTurn(0) });
    const first = await client.projection("c");
    await client.postTurn("c", { turn: 1, events: messageTurn(1) });
    const second = await client.projection("c");
    expect(gets[0]?.url).not.toContain("since=");
    expect(gets[1]?.url).toContain(`since=${encodeURIComponent(first.etag)}`);
    expect(second.events).toEqual([...messageTurn(0), ...messageTurn(1)]);
    expect(second.turns).toEqual([{ kept: 0 }, { kept: 1 }]);
    expect(second).not.toHaveProperty("delta");
    // The second answer was the appended turn, not the view.
    expect(gets[1]?.delta).toBe(true);
  });

  it("a caller that changes the returned arrays leaves the held view alone", async () => {
    const { client, fresh } = setUp();
    await client.postTurn("c", { turn: 0, events: messageTurn(0) });
    const first = await client.projection("c", { format: "openai-chat" });
    first.messages.push({ role: "user", content: "next" });
    first.turns.length = 0;
    await client.postTurn("c", { turn: 1, events: messageTurn(1) });
    expect(await client.projection("c", { format: "openai-chat" })).toEqual(
      await fresh().projection("c", { format: "openai-chat" }),
    );
  });

  it("property: over appends, firings and removals, every read equals a fresh full read", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), tool: fc.boolean() }),
      fc.record({
        kind: fc.constant("compact" as const),
        policy: fc.constantFrom("s", "t"),
        from: fc.nat(6),
        span: fc.nat(3),
      }),
      fc.record({ kind: fc.constant("remove" as const), position: fc.integer({ min: 1, max: 3 }) }),
    );
    let deltas = 0;
    const format = fc.constantFrom("jp", "openai-chat", "anthropic-messages", "openai-responses");
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), format, async (ops, name) => {
        const { h, client, gets, fresh } = setUp();
        const options = { format: name } as { format: "openai-chat" };
        let turns = 0;
        const append = async (tool: boolean) => {
          const events = tool ? toolTurn(turns) : messageTurn(turns);
          await client.postTurn("c", { turn: turns, events });
          turns++;
        };
        await append(false);
        expect(await client.projection("c", options)).toEqual(
          await fresh().projection("c", options),
        );
        for (const step of ops) {
          if (step.kind === "append") await append(step.tool);
          else if (step.kind === "compact" && step.from < turns) {
            const to = Math.min(turns - 1, step.from + step.span);
            const spec = `${step.policy}:${step.from}..${to}`;
            const added = await h.request("POST", "/v1/conversations/c/compactions", { spec });
            expect(added.status).toBeLessThan(500);
          } else if (step.kind === "remove") {
            const path = `/v1/conversations/c/compactions/${step.position}`;
            expect((await h.request("DELETE", path)).status).toBeLessThan(500);
          }
          expect(await client.projection("c", options)).toEqual(
            await fresh().projection("c", options),
          );
        }
        expect(gets.slice(1).every((g) => g.url.includes("since="))).toBe(true);
        deltas += gets.filter((g) => g.delta).length;
      }),
      propertyRuns(12),
    );
    // The reads were answered with splices, not only in full.
    expect(deltas).toBeGreaterThan(0);
  });
});
