/**
 * The client reads paged views whole (issue 25 item 4): `events()` and
 * `projection()` follow `next_cursor` and join the pages, and start again
 * when the view changed under the cursor (409 `stale-cursor`).
 */
import { describe, expect, it } from "vitest";
import { AutocompactClient } from "../../client/index.ts";
import { bigToolTurn } from "../helpers/builders.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

const URL_BASE = "http://autocompact.test";

/** A client of a harness holding three turns of 2.5 MB (two pages), and the GETs it sends. */
async function bigConversation(onGet: (url: string) => Promise<void> = async () => {}) {
  const h = harness();
  const gets: string[] = [];
  const client = new AutocompactClient({
    url: URL_BASE,
    key: ALICE_KEY,
    fetch: async (input, init) => {
      if ((init.method ?? "GET") === "GET") {
        gets.push(input);
        await onGet(input);
      }
      return h.app.request(input, init);
    },
  });
  for (const turn of [0, 1, 2]) {
    await client.postTurn("big", { turn, events: bigToolTurn(turn, 2_500_000) });
  }
  return { h, client, gets };
}

describe("AutocompactClient reads a multi-page view whole", () => {
  it("events(): every page, joined, with no next_cursor", async () => {
    const { h, client, gets } = await bigConversation();
    const read = await client.events("big");
    // What the store holds, read without the service.
    const stored = await h.store.readTurns({ tenant: "alice", conversation: "big" });
    expect(read).toEqual({ events: stored.flatMap((t) => t.events) });
    expect(gets).toHaveLength(2);
    expect(gets[1]).toMatch(/\/events\?cursor=[A-Za-z0-9_-]+$/);
  });

  it("projection() in JP and in a format: the turns and the messages of every page", async () => {
    const { client, gets } = await bigConversation();
    const jp = await client.projection("big");
    expect(jp.turns).toEqual([{ kept: 0 }, { kept: 1 }, { kept: 2 }]);
    expect(jp.events).toHaveLength(15);
    expect(jp).not.toHaveProperty("next_cursor");
    const chat = await client.projection("big", { format: "openai-chat" });
    // Per turn: the user's request, the assistant's call, the tool's output, the answer.
    expect(chat.messages).toHaveLength(12);
    expect(chat.turns).toEqual(jp.turns);
    expect(gets.filter((url) => url.includes("format=openai-chat&cursor="))).toHaveLength(1);
  });

  it("joins only the paged fields: an array about the whole view comes once, from the last page", async () => {
    const pages = [
      { events: [{ n: 0 }], warnings: [{ code: "w" }], next_cursor: "c1" },
      { events: [{ n: 1 }], warnings: [{ code: "w" }] },
    ];
    const client = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (input) =>
        Response.json(pages[input.includes("cursor=c1") ? 1 : 0], { status: 200 }),
    });
    expect(await client.events("c")).toEqual({
      events: [{ n: 0 }, { n: 1 }],
      warnings: [{ code: "w" }],
    });
  });

  it("projection(): the warnings are the whole view's, as each page says them, never one set a page", async () => {
    const { client, gets } = await bigConversation();
    const view = await client.projection("big");
    expect(gets).toHaveLength(2);
    expect(view.warnings.map((w) => w.code)).toEqual(["auto_disabled", "context_window_unknown"]);
  });

  it("starts again when a compaction lands between two pages", async () => {
    let landed = false;
    const setUp = await bigConversation(async (url) => {
      if (!landed && url.includes("cursor=")) {
        landed = true;
        await setUp.client.compact("big", { spec: "t:0..0" });
      }
    });
    const view = await setUp.client.projection("big");
    // The second read saw the compaction: turn 0's tool output is stripped.
    const outputs = view.events.filter((e) => e.type === "tool_call_response");
    expect(outputs.map((e) => (e as { content: string }).content.length)).toEqual([
      "[compacted] read: success".length,
      2_500_000,
      2_500_000,
    ]);
    expect(setUp.gets.filter((url) => !url.includes("cursor="))).toHaveLength(2);
  });
});
