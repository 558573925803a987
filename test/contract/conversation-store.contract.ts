/**
 * The contract of {@link ConversationStore} (functions/ports.ts), run against
 * every implementation. Each test works on conversations of its own (fresh
 * random ids), so a factory may hand out stores over one shared table.
 */
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../core/errors.ts";
import type { Compaction, Entry } from "../../core/events.ts";
import { measureTurn } from "../../core/sizes.ts";
import { indexTurns } from "../../core/turns.ts";
import { ConditionFailedError } from "../../functions/errors.ts";
import type {
  ConversationHead,
  ConversationPage,
  ConversationRef,
  ConversationStore,
  HeadVersion,
  StoredCompaction,
  StoredTurn,
} from "../../functions/ports.ts";
import {
  at,
  compaction,
  message,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../helpers/builders.ts";
import { generateConversation, prng } from "../helpers/conversation.ts";

/** A conversation of its own for one test. */
export function freshRef(tenant = `tenant-${randomUUID()}`): ConversationRef {
  return { tenant, conversation: `conv-${randomUUID()}` };
}

/** A stored turn for `events`: size counts from `measureTurn`, digest of the JSON. */
export function storedTurn(
  turn: number,
  events: Entry[],
  model?: StoredTurn["model"],
  names = new Map<string, string>(),
): StoredTurn {
  return {
    turn,
    events,
    size: measureTurn(events, names),
    digest: createHash("sha256").update(JSON.stringify(events)).digest("hex"),
    ...(model ? { model } : {}),
  };
}

/** `count` realistic turns from the seeded conversation generator. */
export function sampleTurns(seed: number, count: number): StoredTurn[] {
  const entries = generateConversation({ seed, turns: count });
  const { turnOf, turnCount } = indexTurns(entries);
  const byTurn: Entry[][] = Array.from({ length: turnCount }, () => []);
  entries.forEach((entry, i) => {
    byTurn[turnOf[i] as number]?.push(entry);
  });
  const names = new Map<string, string>();
  return byTurn.map((events, turn) =>
    storedTurn(turn, events, { id: "anthropic/claude-sonnet-4-5" }, names),
  );
}

const NOISE_ALPHABET = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ \n"\\{}<>éü日本🚀',
];
const NOISE_BYTES = NOISE_ALPHABET.map((char) => Buffer.byteLength(char));

const NOISE_BLOCK_BYTES = 48 * 1024;
const noiseBlocks = new Map<number, string>();

/** A seeded block of random text, larger than gzip's 32 KB window. */
function noiseBlock(seed: number): string {
  let block = noiseBlocks.get(seed);
  if (block === undefined) {
    const r = prng(seed);
    const parts: string[] = [];
    for (let size = 0; size < NOISE_BLOCK_BYTES; ) {
      const index = Math.floor(r() * NOISE_ALPHABET.length);
      parts.push(NOISE_ALPHABET[index] as string);
      size += NOISE_BYTES[index] as number;
    }
    block = parts.join("");
    noiseBlocks.set(seed, block);
  }
  return block;
}

/**
 * Exactly `bytes` UTF-8 bytes of seeded text that barely compresses (a random
 * block repeated beyond gzip's window), multi-byte characters included.
 */
export function noise(seed: number, bytes: number): string {
  const block = noiseBlock(seed);
  const blockBytes = Buffer.byteLength(block);
  const whole = Math.floor(bytes / blockBytes);
  let rest = bytes - whole * blockBytes;
  let tail = "";
  for (const char of block) {
    const length = Buffer.byteLength(char);
    if (length > rest) break;
    tail += char;
    rest -= length;
  }
  return block.repeat(whole) + tail + "x".repeat(rest);
}

/** A turn with one tool call whose response is `bytes` long. */
function toolTurn(turn: number, bytes: number, seed: number): StoredTurn {
  return storedTurn(turn, [
    turnStart(turn),
    request(`read the log ${turn}`, turn),
    toolCall(`call-${turn}`, "fs_read_file", { path: "build.log" }, turn),
    toolResult(`call-${turn}`, noise(seed, bytes), false, turn),
    message(`read ${bytes} bytes`, turn),
  ]);
}

/** Turn `turn`: a request and an answer of a few characters. */
export function simpleTurn(turn: number): StoredTurn {
  return storedTurn(turn, [turnStart(turn), request(`q${turn}`, turn), message(`m${turn}`, turn)]);
}

/** A stored compaction keyed `key`, added after `afterTurn`. */
export function storedCompaction(
  key: string,
  afterTurn: number,
  seq: number,
  value: Compaction = compaction(0, afterTurn, seq, { reasoning: "strip" }),
): StoredCompaction {
  return { key, after_turn: afterTurn, seq, compaction: value };
}

/** Appends `turns` in order to a conversation without compactions. */
export async function appendAll(
  store: ConversationStore,
  ref: ConversationRef,
  turns: StoredTurn[],
) {
  for (const turn of turns) await store.appendTurn(ref, turn, { compactions_version: 0 }, {});
}

/** The head version a write is conditional on, read now. */
async function versionOf(store: ConversationStore, ref: ConversationRef): Promise<HeadVersion> {
  const head = await store.getHead(ref);
  return { turn_count: head?.turn_count ?? 0, compactions_version: head?.compactions_version ?? 0 };
}

/**
 * `head` without its incarnation, which must be there: it is random (the
 * incarnation tests hold what it must be), the rest is compared exactly.
 */
function counted(
  head: ConversationHead | undefined,
): Omit<ConversationHead, "incarnation"> | undefined {
  if (head === undefined) return undefined;
  const { incarnation, ...rest } = head;
  expect(incarnation).toEqual(expect.stringMatching(/^\S+$/));
  return rest;
}

const json = (value: unknown) => JSON.stringify(value);
const summaryOf = ({ events: _events, ...summary }: StoredTurn) => summary;

/** Equal turns, with each turn's events byte-exact (same JSON) and the rest deeply equal. */
function expectTurns(actual: readonly (StoredTurn | undefined)[], expected: readonly StoredTurn[]) {
  expect(actual.map((turn) => turn?.turn)).toEqual(expected.map((turn) => turn.turn));
  expected.forEach((turn, index) => {
    const got = actual[index];
    expect(got && summaryOf(got)).toEqual(summaryOf(turn));
    const same = got !== undefined && json(got.events) === json(turn.events);
    expect(same, `events of turn ${turn.turn} read back byte-exact`).toBe(true);
  });
}

async function settle<T>(promises: Promise<T>[]) {
  const results = await Promise.allSettled(promises);
  const won = results.flatMap((result, index) => (result.status === "fulfilled" ? [index] : []));
  const errors = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
  return { won, errors };
}

/** Options of {@link conversationStoreContract}. */
export interface ContractOptions {
  /** Run the multi-megabyte cases (default true); a second run of the suite may skip them. */
  readonly large?: boolean;
  /** Run the cases concurrently (they never share a conversation): for slow backends. */
  readonly concurrent?: boolean;
}

/** What a contract case may ask of a store it makes. */
export interface StoreOptions {
  /** The time of activity the list orders by (default the wall clock). */
  readonly now?: () => number;
}

/** Every page of a tenant's list, following `next_cursor`, `limit` at a time. */
async function allPages(
  store: ConversationStore,
  tenant: string,
  limit: number,
): Promise<ConversationPage[]> {
  const pages: ConversationPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listConversations(tenant, {
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor !== undefined);
  return pages;
}

export function conversationStoreContract(
  name: string,
  makeStore: (options?: StoreOptions) => Promise<ConversationStore>,
  { large = true, concurrent = false }: ContractOptions = {},
): void {
  // The multi-megabyte cases are defined only where wanted, so no run reports skipped tests.
  const itLarge: (title: string, fn: () => Promise<void>, timeout?: number) => void = large
    ? (title, fn, timeout) => it(title, fn, timeout)
    : () => undefined;
  describe(`ConversationStore contract: ${name}`, { concurrent }, () => {
    describe("turns", () => {
      it("appends turns in sequence and counts them", async () => {
        const store = await makeStore();
        const ref = freshRef();
        expect(await store.getHead(ref)).toBeUndefined();
        const turns = sampleTurns(1, 6);
        for (const [index, turn] of turns.entries()) {
          await store.appendTurn(
            ref,
            turn,
            { compactions_version: 0 },
            { projected_chars: index * 100 },
          );
          expect((await store.getHead(ref))?.turn_count).toBe(index + 1);
        }
        expect(counted(await store.getHead(ref))).toEqual({
          turn_count: 6,
          evaluated_through: -1,
          projected_chars: 500,
          compactions_version: 0,
          max_compacted_turn: -1,
        });
        expectTurns(await Promise.all(turns.map((t) => store.getTurn(ref, t.turn))), turns);
        expect(await store.getTurn(ref, 6)).toBeUndefined();
        expect(await store.getTurn(freshRef(), 0)).toBeUndefined();
      });

      it("rejects a turn that is not the next one", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const refused = (turn: StoredTurn, version = 0) =>
          expect(
            store.appendTurn(ref, turn, { compactions_version: version }, { projected_chars: 9 }),
          ).rejects.toBeInstanceOf(ConditionFailedError);
        await refused(simpleTurn(1));
        expect(await store.getHead(ref)).toBeUndefined();
        await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
        await refused(simpleTurn(0));
        await refused(simpleTurn(1));
        await refused(simpleTurn(3));
        // Even an identical replay fails: the caller compares digests.
        await refused((await store.getTurn(ref, 1)) as StoredTurn);
        expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, projected_chars: 0 });
        expect((await store.readTurns(ref)).map((t) => t.turn)).toEqual([0, 1]);
      });

      it("rejects a turn computed before a compaction landed", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await expect(
          store.appendTurn(ref, simpleTurn(0), { compactions_version: 1 }, {}),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.getHead(ref)).toBeUndefined();
        await appendAll(store, ref, sampleTurns(2, 3));
        await store.addCompaction(
          ref,
          storedCompaction("AUTO#000002", 2, 0),
          await versionOf(store, ref),
          {},
        );
        await expect(
          store.appendTurn(ref, simpleTurn(3), { compactions_version: 0 }, {}),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        await expect(
          store.appendTurn(ref, simpleTurn(3), { compactions_version: 2 }, {}),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        await store.appendTurn(
          ref,
          simpleTurn(3),
          { compactions_version: 1 },
          { projected_chars: 3 },
        );
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 4,
          compactions_version: 1,
          projected_chars: 3,
        });
      });

      it("appends an uncompacted turn without a read, adding its characters to the projection", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const add = (chars: number) => ({ uncompacted: true as const, add_projected_chars: chars });
        await store.appendTurn(ref, simpleTurn(0), add(10), { model: { id: "m" } });
        await store.appendTurn(ref, simpleTurn(1), add(5), {});
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 2,
          projected_chars: 15,
          compactions_version: 0,
          max_compacted_turn: -1,
          evaluated_through: -1,
          model: { id: "m" },
        });
        // A replayed or skipped turn fails the condition (the caller then reads the head).
        await expect(store.appendTurn(ref, simpleTurn(1), add(5), {})).rejects.toBeInstanceOf(
          ConditionFailedError,
        );
        await expect(store.appendTurn(ref, simpleTurn(3), add(5), {})).rejects.toBeInstanceOf(
          ConditionFailedError,
        );
        // After a compaction that does not cover the next turn, the characters add to its total.
        await store.addCompaction(
          ref,
          storedCompaction("MAN#000001", 1, 1, compaction(0, 1, 1, { reasoning: "strip" })),
          await versionOf(store, ref),
          {
            projected_chars: 7,
            max_compacted_turn: 1,
          },
        );
        await store.appendTurn(ref, simpleTurn(2), add(3), {});
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 3,
          projected_chars: 10,
          compactions_version: 1,
        });
        const configured = freshRef();
        await store.putConfig(configured, { enabled: true });
        await store.appendTurn(configured, simpleTurn(0), add(4), {});
        expect(await store.getHead(configured)).toMatchObject({
          turn_count: 1,
          projected_chars: 4,
          config: { enabled: true },
        });
      });

      it("refuses an uncompacted append older than the head's latest event, and records the latest", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const at = (ms: number) => ({
          uncompacted: true as const,
          add_projected_chars: 1,
          latest_event_ms: ms,
        });
        // A head written before latest_event_ms existed has none: any time passes.
        await store.appendTurn(
          ref,
          simpleTurn(0),
          { uncompacted: true, add_projected_chars: 1 },
          {},
        );
        await store.appendTurn(ref, simpleTurn(1), at(1_000), { latest_event_ms: 1_000 });
        expect((await store.getHead(ref))?.latest_event_ms).toBe(1_000);
        await expect(
          store.appendTurn(ref, simpleTurn(2), at(999), { latest_event_ms: 999 }),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, latest_event_ms: 1_000 });
        // Equal is not older.
        await store.appendTurn(ref, simpleTurn(2), at(1_000), { latest_event_ms: 1_000 });
        await store.appendTurn(ref, simpleTurn(3), at(2_500), { latest_event_ms: 2_500 });
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 4,
          projected_chars: 4,
          latest_event_ms: 2_500,
        });
      });

      it("refuses an uncompacted append of a turn a compaction already covers", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await appendAll(store, ref, sampleTurns(3, 3));
        await store.addCompaction(
          ref,
          storedCompaction("MAN#000001", 2, 1, compaction(0, 5, 1, { reasoning: "strip" })),
          await versionOf(store, ref),
          {
            max_compacted_turn: 5,
          },
        );
        await expect(
          store.appendTurn(ref, simpleTurn(3), { uncompacted: true, add_projected_chars: 1 }, {}),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect((await store.getHead(ref))?.turn_count).toBe(3);
        expect(await store.readTurns(ref, 3)).toEqual([]);
      });

      it.each([2, 5])("lets exactly one of %i concurrent appends of a turn succeed", async (n) => {
        const store = await makeStore();
        const ref = freshRef();
        await store.appendTurn(ref, simpleTurn(0), { compactions_version: 0 }, {});
        const candidates = Array.from({ length: n }, (_, i) =>
          storedTurn(1, [turnStart(1), request(`candidate ${i}`, 1), message(`answer ${i}`, 1)]),
        );
        const { won, errors } = await settle(
          candidates.map((turn, i) =>
            store.appendTurn(ref, turn, { compactions_version: 0 }, { projected_chars: i }),
          ),
        );
        expect(won).toHaveLength(1);
        expect(errors).toHaveLength(n - 1);
        for (const error of errors) expect(error).toBeInstanceOf(ConditionFailedError);
        const winner = won[0] as number;
        expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, projected_chars: winner });
        expectTurns([await store.getTurn(ref, 1)], [candidates[winner] as StoredTurn]);
      });

      it("lets exactly one of concurrent first appends create the conversation", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const candidates = Array.from({ length: 5 }, (_, i) =>
          storedTurn(0, [turnStart(0), request(`first ${i}`)]),
        );
        const { won } = await settle(
          candidates.map((turn) => store.appendTurn(ref, turn, { compactions_version: 0 }, {})),
        );
        expect(won).toHaveLength(1);
        expectTurns(await store.readTurns(ref), [candidates[won[0] as number] as StoredTurn]);
      });

      it("stores a 900 KB tool response byte-exact", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const big = toolTurn(0, 900 * 1024, 7);
        await store.appendTurn(ref, big, { compactions_version: 0 }, {});
        expectTurns([await store.getTurn(ref, 0)], [big]);
        expectTurns(await store.readTurns(ref), [big]);
      });

      itLarge("stores a 5 MB turn byte-exact, between ordinary turns", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const events: Entry[] = [turnStart(1), request("dump everything", 1)];
        for (let i = 0; i < 5; i++) {
          events.push(toolCall(`c${i}`, "run_command", { command: `cat part${i}` }, 1));
          events.push(toolResult(`c${i}`, noise(100 + i, 1024 * 1024), i === 3, 1));
        }
        events.push({ type: "x_future_entry", timestamp: at(1), lone: "\ud800 surrogate" });
        const huge = storedTurn(1, events);
        expect(Buffer.byteLength(json(huge.events))).toBeGreaterThan(5 * 1024 * 1024);
        const turns = [simpleTurn(0), huge, simpleTurn(2)];
        await appendAll(store, ref, turns);
        expectTurns([await store.getTurn(ref, 1)], [huge]);
        expectTurns(await store.readTurns(ref), turns);
        expect((await store.getHead(ref))?.turn_count).toBe(3);
        // The same turn through the read-free path, into another conversation.
        const other = freshRef();
        await store.appendTurn(
          other,
          simpleTurn(0),
          { uncompacted: true, add_projected_chars: 1 },
          {},
        );
        await store.appendTurn(other, huge, { uncompacted: true, add_projected_chars: 2 }, {});
        expectTurns(await store.readTurns(other), [simpleTurn(0), huge]);
        expect(await store.getHead(other)).toMatchObject({ turn_count: 2, projected_chars: 3 });
      });

      itLarge("lets exactly one of two concurrent 5 MB appends succeed", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const candidates = [0, 1].map((i) =>
          storedTurn(0, [turnStart(0), toolResult("c", noise(200 + i, 5 * 1024 * 1024))]),
        );
        const { won, errors } = await settle(
          candidates.map((turn) => store.appendTurn(ref, turn, { compactions_version: 0 }, {})),
        );
        expect(won).toHaveLength(1);
        expect(errors[0]).toBeInstanceOf(ConditionFailedError);
        expectTurns(await store.readTurns(ref), [candidates[won[0] as number] as StoredTurn]);
      });

      it("reads many turns, more than 1 MB of them, completely and in order", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const turns = Array.from({ length: 40 }, (_, t) =>
          t % 5 === 2
            ? toolTurn(t, 250 * 1024, t)
            : { ...(sampleTurns(t, 1)[0] as StoredTurn), turn: t },
        );
        await appendAll(store, ref, turns);
        expectTurns(await store.readTurns(ref), turns);
        expect(await store.listTurnSizes(ref)).toEqual(turns.map(summaryOf));
      });

      it("reads ranges of turns", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const turns = sampleTurns(3, 12);
        await appendAll(store, ref, turns);
        const numbers = async (from?: number, to?: number) =>
          (await store.readTurns(ref, from, to)).map((t) => t.turn);
        expect(await numbers()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        expect(await numbers(3, 5)).toEqual([3, 4, 5]);
        expect(await numbers(4, 4)).toEqual([4]);
        expect(await numbers(9)).toEqual([9, 10, 11]);
        expect(await numbers(10, 100)).toEqual([10, 11]);
        expect(await numbers(0, 0)).toEqual([0]);
        expect(await numbers(6, 5)).toEqual([]);
        expect(await numbers(12)).toEqual([]);
        expectTurns(await store.readTurns(ref, 2, 3), turns.slice(2, 4));
        expect(await store.readTurns(freshRef())).toEqual([]);
      });

      it("lists turn sizes without events", async () => {
        const store = await makeStore();
        const ref = freshRef();
        expect(await store.listTurnSizes(ref)).toEqual([]);
        const turns = sampleTurns(4, 5);
        await appendAll(store, ref, turns);
        const summaries = await store.listTurnSizes(ref);
        expect(summaries).toEqual(turns.map(summaryOf));
        for (const summary of summaries) expect(summary).not.toHaveProperty("events");
      });

      it("reads the size records of the turns asked for, running totals included", async () => {
        const store = await makeStore();
        const ref = freshRef();
        expect(await store.getTurnSizes(ref, [0])).toEqual([]);
        const totals = (t: number) => ({
          text: t,
          reasoning: 2 * t,
          tool_requests: 3,
          tool_requests_stripped: 1,
          tool_responses: 5,
          tool_responses_stripped: 0,
          linked_requests: 7,
          linked_requests_stripped: 6,
          linked_responses: 9,
          linked_responses_stripped: 8,
        });
        const turns = sampleTurns(6, 7).map((turn, t) =>
          t === 3 ? turn : { ...turn, totals: totals(t) },
        );
        await appendAll(store, ref, turns);
        const records = await store.getTurnSizes(ref, [5, 1, 3, 5, 9]);
        expect(records).toEqual([1, 3, 5].map((t) => summaryOf(turns[t] as StoredTurn)));
        expect(records[0]?.totals).toEqual(totals(1));
        expect(records[1]).not.toHaveProperty("totals");
        expect(await store.getTurnSizes(ref, [])).toEqual([]);
      });

      it("keeps the latest band's timestamp on the head", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await store.appendTurn(ref, simpleTurn(0), { compactions_version: 0 }, {});
        const band = compaction(0, 0, 1, { reasoning: "strip" });
        await store.addCompaction(
          ref,
          storedCompaction("MAN#1", 0, 1, band),
          { turn_count: 1, compactions_version: 0 },
          { max_compacted_turn: 0, latest_band_at: band.timestamp },
        );
        expect((await store.getHead(ref))?.latest_band_at).toBe(band.timestamp);
      });

      it("sets the head fields an append carries and keeps the others", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await store.appendTurn(
          ref,
          simpleTurn(0),
          { compactions_version: 0 },
          {
            projected_chars: 10,
            model: { id: "openai/gpt-4o", context_window: 128_000 },
            stream_config: { enabled: true, rule: { keep_last: 2 } },
          },
        );
        await store.appendTurn(
          ref,
          simpleTurn(1),
          { compactions_version: 0 },
          { projected_chars: 20 },
        );
        expect(counted(await store.getHead(ref))).toEqual({
          turn_count: 2,
          evaluated_through: -1,
          projected_chars: 20,
          compactions_version: 0,
          max_compacted_turn: -1,
          model: { id: "openai/gpt-4o", context_window: 128_000 },
          stream_config: { enabled: true, rule: { keep_last: 2 } },
        });
      });
    });

    describe("compactions", () => {
      async function conversationWithTurns(store: ConversationStore, count = 3) {
        const ref = freshRef();
        await appendAll(store, ref, sampleTurns(5, count));
        return ref;
      }

      it("lists compactions in stream order (after_turn, then seq)", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store, 8);
        const added = [
          storedCompaction("MAN#b", 5, 0),
          storedCompaction("AUTO#000003", 2, 1),
          storedCompaction("MAN#a", 5, 2),
          storedCompaction(
            "AUTO#000007",
            7,
            3,
            compaction(1, 4, 30, {
              source: "auto",
              summary: { summary: "decisions, paths 日本 🚀" },
              trigger: {
                turn: 7,
                estimated_tokens: 151_234.5,
                threshold: 150_000,
                context_window: 200_000,
                estimated_tokens_after: 40_210.25,
              },
            }),
          ),
          storedCompaction("AUTO#000001", 2, 4),
        ];
        for (const [version, item] of added.entries()) {
          await store.addCompaction(
            ref,
            item,
            { turn_count: 8, compactions_version: version },
            { max_compacted_turn: version },
          );
        }
        const listed = await store.listCompactions(ref);
        expect(listed.map((c) => c.key)).toEqual([
          "AUTO#000003",
          "AUTO#000001",
          "MAN#b",
          "MAN#a",
          "AUTO#000007",
        ]);
        expect(listed).toEqual([added[1], added[4], added[0], added[2], added[3]]);
        const auto = listed.find((c) => c.key === "AUTO#000007");
        expect(json(auto?.compaction)).toBe(json(added[3]?.compaction));
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 5,
          max_compacted_turn: 4,
          turn_count: 8,
        });
      });

      it("refuses a second compaction under the same key", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store);
        await store.addCompaction(
          ref,
          storedCompaction("AUTO#000002", 2, 0),
          { turn_count: 3, compactions_version: 0 },
          {},
        );
        await expect(
          store.addCompaction(
            ref,
            storedCompaction("AUTO#000002", 2, 1),
            { turn_count: 3, compactions_version: 1 },
            { projected_chars: 1 },
          ),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.listCompactions(ref)).toEqual([storedCompaction("AUTO#000002", 2, 0)]);
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 1,
          projected_chars: 0,
        });
      });

      it("refuses a stale expected version or turn count", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store);
        await store.addCompaction(
          ref,
          storedCompaction("MAN#1", 2, 0),
          { turn_count: 3, compactions_version: 0 },
          {},
        );
        for (const stale of [
          { turn_count: 3, compactions_version: 0 },
          { turn_count: 3, compactions_version: 2 },
          { turn_count: 2, compactions_version: 1 },
          { turn_count: 4, compactions_version: 1 },
        ]) {
          await expect(
            store.addCompaction(ref, storedCompaction("MAN#2", 2, 1), stale, {
              max_compacted_turn: 9,
            }),
          ).rejects.toBeInstanceOf(ConditionFailedError);
        }
        expect((await store.listCompactions(ref)).map((c) => c.key)).toEqual(["MAN#1"]);
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 3,
          compactions_version: 1,
          max_compacted_turn: -1,
        });
      });

      it("refuses a compaction on a conversation that does not exist", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await expect(
          store.addCompaction(
            ref,
            storedCompaction("MAN#1", 0, 0),
            { turn_count: 0, compactions_version: 0 },
            {},
          ),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.getHead(ref)).toBeUndefined();
        expect(await store.listCompactions(ref)).toEqual([]);
      });

      it("lands exactly one of five concurrent compactions on the same version", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store);
        const candidates = Array.from({ length: 5 }, (_, i) =>
          storedCompaction(i % 2 === 0 ? `AUTO#00000${i}` : `MAN#${i}`, 2, 0),
        );
        const { won, errors } = await settle(
          candidates.map((candidate, i) =>
            store.addCompaction(
              ref,
              candidate,
              { turn_count: 3, compactions_version: 0 },
              {
                projected_chars: 1000 + i,
              },
            ),
          ),
        );
        expect(won).toHaveLength(1);
        for (const error of errors) expect(error).toBeInstanceOf(ConditionFailedError);
        const winner = won[0] as number;
        expect(await store.listCompactions(ref)).toEqual([candidates[winner]]);
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 1,
          projected_chars: 1000 + winner,
        });
      });

      it("lands only one of a turn and a compaction computed from the same head", async () => {
        const store = await makeStore();
        for (let round = 0; round < 4; round++) {
          const ref = await conversationWithTurns(store);
          const read = await versionOf(store, ref);
          const { won, errors } = await settle<void>([
            store.appendTurn(
              ref,
              simpleTurn(3),
              { compactions_version: read.compactions_version },
              { projected_chars: 1 },
            ),
            store.addCompaction(ref, storedCompaction("AUTO#000002", 2, 0), read, {
              projected_chars: 2,
            }),
          ]);
          expect(won).toHaveLength(1);
          expect(errors[0]).toBeInstanceOf(ConditionFailedError);
          const head = await store.getHead(ref);
          if (won[0] === 0) {
            expect(head).toMatchObject({
              turn_count: 4,
              compactions_version: 0,
              projected_chars: 1,
            });
            expect(await store.listCompactions(ref)).toEqual([]);
          } else {
            expect(head).toMatchObject({
              turn_count: 3,
              compactions_version: 1,
              projected_chars: 2,
            });
            expect(await store.readTurns(ref, 3)).toEqual([]);
          }
        }
      });

      it("removes compactions under the head condition", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store, 6);
        const items = [
          storedCompaction("AUTO#000003", 3, 0),
          storedCompaction("MAN#x", 4, 1),
          storedCompaction("AUTO#000005", 5, 2),
        ];
        for (const [version, item] of items.entries()) {
          await store.addCompaction(
            ref,
            item,
            { turn_count: 6, compactions_version: version },
            { max_compacted_turn: item.after_turn },
          );
        }
        for (const stale of [
          { turn_count: 6, compactions_version: 2 },
          { turn_count: 5, compactions_version: 3 },
        ]) {
          await expect(
            store.removeCompactions(ref, ["AUTO#000003"], stale, { max_compacted_turn: -1 }),
          ).rejects.toBeInstanceOf(ConditionFailedError);
        }
        expect(await store.listCompactions(ref)).toHaveLength(3);

        await store.removeCompactions(
          ref,
          ["AUTO#000003", "AUTO#000005", "AUTO#missing"],
          { turn_count: 6, compactions_version: 3 },
          { max_compacted_turn: 4, projected_chars: 77 },
        );
        expect(await store.listCompactions(ref)).toEqual([items[1]]);
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 4,
          max_compacted_turn: 4,
          projected_chars: 77,
          turn_count: 6,
        });
        await store.removeCompactions(
          ref,
          ["MAN#x"],
          { turn_count: 6, compactions_version: 4 },
          {
            max_compacted_turn: -1,
          },
        );
        expect(await store.listCompactions(ref)).toEqual([]);
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 5,
          max_compacted_turn: -1,
        });
        // The key is free again.
        await store.addCompaction(
          ref,
          storedCompaction("MAN#x", 5, 5),
          { turn_count: 6, compactions_version: 5 },
          {},
        );
        expect((await store.listCompactions(ref)).map((c) => c.key)).toEqual(["MAN#x"]);
      });

      it("records the keys a reset has still to remove on the head, and clears them with []", async () => {
        const store = await makeStore();
        const ref = await conversationWithTurns(store, 4);
        const keys = ["MAN#a", "MAN#b", "MAN#c"];
        for (const [version, key] of keys.entries()) {
          await store.addCompaction(
            ref,
            storedCompaction(key, 3, version + 1),
            { turn_count: 4, compactions_version: version },
            { max_compacted_turn: 3 },
          );
        }
        await store.removeCompactions(
          ref,
          ["MAN#a"],
          { turn_count: 4, compactions_version: 3 },
          { removing: ["MAN#b", "MAN#c"] },
        );
        expect(await store.getHead(ref)).toMatchObject({
          compactions_version: 4,
          removing: ["MAN#b", "MAN#c"],
        });
        // Other writes keep it.
        await store.appendTurn(ref, simpleTurn(4), { compactions_version: 4 }, {});
        await store.markEvaluated(ref, 4);
        expect((await store.getHead(ref))?.removing).toEqual(["MAN#b", "MAN#c"]);
        await store.removeCompactions(
          ref,
          ["MAN#b", "MAN#c"],
          { turn_count: 5, compactions_version: 4 },
          { removing: [], max_compacted_turn: -1 },
        );
        const head = await store.getHead(ref);
        expect(head).toMatchObject({ compactions_version: 5, max_compacted_turn: -1 });
        expect(head && "removing" in head).toBe(false);
        expect(await store.listCompactions(ref)).toEqual([]);
      });
    });

    describe("head", () => {
      it("creates the head on putConfig and keeps the config across appends", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const config = { enabled: true, trigger_ratio: 0.5, rule: { keep_last: 2, summary: null } };
        await store.putConfig(ref, config);
        expect(counted(await store.getHead(ref))).toEqual({
          turn_count: 0,
          evaluated_through: -1,
          projected_chars: 0,
          compactions_version: 0,
          max_compacted_turn: -1,
          config,
        });
        await store.appendTurn(
          ref,
          simpleTurn(0),
          { compactions_version: 0 },
          { projected_chars: 5 },
        );
        await store.appendTurn(ref, simpleTurn(1), { compactions_version: 0 }, {});
        expect(await store.getHead(ref)).toMatchObject({
          turn_count: 2,
          projected_chars: 5,
          config,
        });
        await store.putConfig(ref, { min_turns: 3 });
        expect(counted(await store.getHead(ref))).toEqual({
          turn_count: 2,
          evaluated_through: -1,
          projected_chars: 5,
          compactions_version: 0,
          max_compacted_turn: -1,
          config: { min_turns: 3 },
        });
      });

      it("raises evaluated_through and never lowers it", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await store.markEvaluated(ref, 3);
        expect(await store.getHead(ref)).toBeUndefined();
        await appendAll(store, ref, sampleTurns(6, 5));
        await store.markEvaluated(ref, 2);
        expect((await store.getHead(ref))?.evaluated_through).toBe(2);
        await store.markEvaluated(ref, 1);
        await store.markEvaluated(ref, 2);
        expect((await store.getHead(ref))?.evaluated_through).toBe(2);
        await Promise.all([4, 0, 3, 1].map((turn) => store.markEvaluated(ref, turn)));
        expect(await store.getHead(ref)).toMatchObject({ evaluated_through: 4, turn_count: 5 });
      });

      it("records a decision with its turn, and a stale mark without one leaves it", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await appendAll(store, ref, sampleTurns(6, 5));
        const skipped = {
          turn: 2,
          outcome: "skipped" as const,
          reason: "under_threshold" as const,
        };
        await store.markEvaluated(ref, 2, skipped);
        expect(await store.getHead(ref)).toMatchObject({
          evaluated_through: 2,
          decided_through: 2,
          last_decision: skipped,
        });
        // A stale skip of turn 3 raises evaluated_through only.
        await store.markEvaluated(ref, 3);
        expect(await store.getHead(ref)).toMatchObject({
          evaluated_through: 3,
          decided_through: 2,
          last_decision: skipped,
        });
        // An older decision arriving late changes nothing.
        await store.markEvaluated(ref, 1, { turn: 1, outcome: "skipped", reason: "min_turns" });
        expect(await store.getHead(ref)).toMatchObject({
          decided_through: 2,
          last_decision: skipped,
        });
        const empty = { turn: 4, outcome: "skipped" as const, reason: "empty_range" as const };
        await store.markEvaluated(ref, 4, empty);
        expect(await store.getHead(ref)).toMatchObject({
          evaluated_through: 4,
          decided_through: 4,
          last_decision: empty,
        });
      });
    });

    describe("repairHead", () => {
      it("rewrites the counters only while the head holds exactly the expected ones", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const config = { min_turns: 2 };
        const model = { id: "m", context_window: 1000 };
        await store.putConfig(ref, config);
        await store.appendTurn(
          ref,
          simpleTurn(0),
          { compactions_version: 0 },
          { projected_chars: 999, model },
        );
        await store.appendTurn(ref, simpleTurn(1), { compactions_version: 0 }, {});
        const expected = {
          turn_count: 2,
          evaluated_through: -1,
          projected_chars: 999,
          compactions_version: 0,
          max_compacted_turn: -1,
        };
        const repaired = {
          turn_count: 2,
          evaluated_through: 1,
          projected_chars: 8,
          compactions_version: 3,
          max_compacted_turn: 0,
        };
        // Any one counter other than the head's: refused, nothing written.
        for (const field of Object.keys(expected) as (keyof typeof expected)[]) {
          const stale = { ...expected, [field]: expected[field] + 1 };
          await expect(store.repairHead(ref, stale, repaired), field).rejects.toBeInstanceOf(
            ConditionFailedError,
          );
        }
        expect(counted(await store.getHead(ref))).toEqual({ ...expected, config, model });
        await store.repairHead(ref, expected, repaired);
        expect(counted(await store.getHead(ref))).toEqual({ ...repaired, config, model });
        // The head it was decided from is gone now.
        await expect(store.repairHead(ref, expected, repaired)).rejects.toBeInstanceOf(
          ConditionFailedError,
        );
      });

      it("refuses after a write that moved only evaluated_through", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
        const read = await store.getHead(ref);
        await store.markEvaluated(ref, 1);
        const expected = {
          turn_count: 2,
          evaluated_through: -1,
          projected_chars: 0,
          compactions_version: 0,
          max_compacted_turn: -1,
        };
        expect(counted(read)).toEqual(expected);
        await expect(
          store.repairHead(ref, expected, { ...expected, projected_chars: 8 }),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(counted(await store.getHead(ref))).toEqual({ ...expected, evaluated_through: 1 });
      });

      it("refuses a conversation that does not exist or is being deleted", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const counters = {
          turn_count: 0,
          evaluated_through: -1,
          projected_chars: 0,
          compactions_version: 0,
          max_compacted_turn: -1,
        };
        await expect(store.repairHead(ref, counters, counters)).rejects.toBeInstanceOf(
          ConditionFailedError,
        );
        expect(await store.getHead(ref)).toBeUndefined();
        await appendAll(store, ref, [simpleTurn(0)]);
        await store.beginDelete(ref);
        const tombstone = { ...counters, turn_count: 1, compactions_version: 1 };
        await expect(
          store.repairHead(ref, tombstone, { ...tombstone, projected_chars: 4 }),
        ).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.getHead(ref)).toMatchObject({ deleting: true, projected_chars: 0 });
      });
    });

    describe("delete", () => {
      /** Everything the port can read of `ref`. */
      async function whatIsLeft(store: ConversationStore, ref: ConversationRef) {
        return {
          head: await store.getHead(ref),
          turns: (await store.readTurns(ref)).length,
          sizes: (await store.listTurnSizes(ref)).length,
          compactions: (await store.listCompactions(ref)).length,
          turn0: await store.getTurn(ref, 0),
        };
      }
      const NOTHING = {
        head: undefined,
        turns: 0,
        sizes: 0,
        compactions: 0,
        turn0: undefined,
      };

      /** A conversation with turns (one of several chunks), two compactions and a config. */
      async function populated(store: ConversationStore, ref: ConversationRef) {
        await store.putConfig(ref, { enabled: true, min_turns: 1 });
        await appendAll(store, ref, [simpleTurn(0), toolTurn(1, 800 * 1024, 7), simpleTurn(2)]);
        await store.addCompaction(
          ref,
          storedCompaction("AUTO#000002", 2, 1),
          { turn_count: 3, compactions_version: 0 },
          { max_compacted_turn: 0, evaluated_through: 2 },
        );
        await store.addCompaction(
          ref,
          storedCompaction("MAN#000002", 2, 2),
          { turn_count: 3, compactions_version: 1 },
          {},
        );
        expect(await whatIsLeft(store, ref)).toMatchObject({
          turns: 3,
          sizes: 3,
          compactions: 2,
          head: { turn_count: 3, compactions_version: 2, config: { enabled: true, min_turns: 1 } },
        });
      }

      it("removes the turns, their events, the compactions, the config and the head", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const other = { tenant: `${ref.tenant}-other`, conversation: ref.conversation };
        await populated(store, ref);
        await appendAll(store, other, [simpleTurn(0)]);
        expect(await store.beginDelete(ref)).toBe(true);
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
        // Another tenant's conversation of the same id is untouched.
        expect(counted(await store.getHead(other))).toEqual({
          turn_count: 1,
          evaluated_through: -1,
          projected_chars: 0,
          compactions_version: 0,
          max_compacted_turn: -1,
        });
        expectTurns(await store.readTurns(other), [simpleTurn(0)]);
        // The id starts afresh: turn 0 again, version 0, no config, no compaction.
        await store.appendTurn(ref, simpleTurn(0), { compactions_version: 0 }, {});
        expect(counted(await store.getHead(ref))).toEqual({
          turn_count: 1,
          evaluated_through: -1,
          projected_chars: 0,
          compactions_version: 0,
          max_compacted_turn: -1,
        });
        expect(await store.listCompactions(ref)).toEqual([]);
        expectTurns(await store.readTurns(ref), [simpleTurn(0)]);
      });

      it("removes more items than one transaction holds", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const turns = Array.from({ length: 110 }, (_, turn) => simpleTurn(turn));
        await appendAll(store, ref, turns);
        expect(await store.beginDelete(ref)).toBe(true);
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
      }, 60_000);

      itLarge(
        "removes a turn too large for one transaction",
        async () => {
          const store = await makeStore();
          const ref = freshRef();
          await appendAll(store, ref, [toolTurn(0, 3 * 1024 * 1024, 11)]);
          expect(await store.beginDelete(ref)).toBe(true);
          await store.finishDelete(ref);
          expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
        },
        60_000,
      );

      it("is idempotent: nothing to delete is no error, and a second delete changes nothing", async () => {
        const store = await makeStore();
        const ref = freshRef();
        expect(await store.beginDelete(ref)).toBe(false);
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
        await populated(store, ref);
        expect(await store.beginDelete(ref)).toBe(true);
        await store.finishDelete(ref);
        expect(await store.beginDelete(ref)).toBe(false);
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
      });

      it("makes the head a tombstone that refuses appends, band writes, resets and config", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await populated(store, ref);
        expect(await store.beginDelete(ref)).toBe(true);
        const tombstone = {
          turn_count: 3,
          evaluated_through: 2,
          projected_chars: 0,
          compactions_version: 3,
          max_compacted_turn: 0,
          config: { enabled: true, min_turns: 1 },
          deleting: true,
        };
        expect(counted(await store.getHead(ref))).toEqual(tombstone);
        const refused = (write: Promise<unknown>) =>
          expect(write).rejects.toBeInstanceOf(ConditionFailedError);
        // Computed from the head before the delete, or from the tombstone itself: both refused.
        for (const compactions_version of [2, 3]) {
          await refused(store.appendTurn(ref, simpleTurn(3), { compactions_version }, {}));
          await refused(
            store.addCompaction(
              ref,
              storedCompaction("AUTO#000003", 2, compactions_version + 1),
              { turn_count: 3, compactions_version },
              { evaluated_through: 3 },
            ),
          );
          await refused(
            store.removeCompactions(
              ref,
              ["MAN#000002"],
              { turn_count: 3, compactions_version },
              {},
            ),
          );
        }
        await refused(
          store.appendTurn(ref, simpleTurn(3), { uncompacted: true, add_projected_chars: 1 }, {}),
        );
        await refused(store.appendTurn(ref, simpleTurn(0), { compactions_version: 0 }, {}));
        await refused(store.putConfig(ref, { enabled: false }));
        await store.markEvaluated(ref, 5);
        expect(counted(await store.getHead(ref))).toEqual(tombstone);
        expect(await whatIsLeft(store, ref)).toMatchObject({ turns: 3, compactions: 2 });
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
      });

      it("finishes a delete that stopped after its tombstone, and leaves live conversations alone", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await populated(store, ref);
        // finishDelete without a tombstone does nothing.
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toMatchObject({ turns: 3, compactions: 2 });
        expect(await store.beginDelete(ref)).toBe(true);
        // (the delete crashed here) A second delete keeps the tombstone and finishes.
        expect(await store.beginDelete(ref)).toBe(true);
        expect(await store.getHead(ref)).toMatchObject({ deleting: true, compactions_version: 4 });
        await store.finishDelete(ref);
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
      });

      it("lets concurrent deletes all finish, leaving nothing", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await populated(store, ref);
        await Promise.all(
          Array.from({ length: 3 }, async () => {
            await store.beginDelete(ref);
            await store.finishDelete(ref);
          }),
        );
        expect(await whatIsLeft(store, ref)).toEqual(NOTHING);
      });
    });

    describe("last failure", () => {
      const failure = (turn: number, message: string) => ({
        turn,
        error: "SummaryTimeoutError",
        message,
        at: "2026-12-01T08:00:00.000Z",
      });

      it("keeps the latest failure per conversation, apart from other tenants'", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const other = { tenant: `${ref.tenant}-other`, conversation: ref.conversation };
        expect(await store.lastFailure(ref)).toBeUndefined();
        await store.recordFailure(ref, failure(3, "the summary timed out after 120 s"));
        await store.recordFailure(ref, failure(4, 'émoji 🚀 and "quotes"'));
        expect(await store.lastFailure(ref)).toEqual({
          turn: 4,
          error: "SummaryTimeoutError",
          message: 'émoji 🚀 and "quotes"',
          at: "2026-12-01T08:00:00.000Z",
        });
        expect(await store.lastFailure(other)).toBeUndefined();
      });

      it("is recorded beside a live conversation without touching it, and removed by a delete", async () => {
        const store = await makeStore();
        const ref = freshRef();
        await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
        const head = await store.getHead(ref);
        await store.recordFailure(ref, failure(1, "boom"));
        expect(await store.getHead(ref)).toEqual(head);
        expect((await store.readTurns(ref)).length).toBe(2);
        expect(await store.listCompactions(ref)).toEqual([]);
        expect(await store.beginDelete(ref)).toBe(true);
        await store.finishDelete(ref);
        expect(await store.lastFailure(ref)).toBeUndefined();
        expect(await store.getHead(ref)).toBeUndefined();
      });
    });

    describe("list", () => {
      it("lists a tenant's conversations most recently active first, a page at a time", async () => {
        let clock = 1_000;
        const store = await makeStore({ now: () => clock });
        const tenant = `tenant-${randomUUID()}`;
        const [a, b, c] = [freshRef(tenant), freshRef(tenant), freshRef(tenant)] as const;
        const model = { id: "anthropic/claude-sonnet-4-5", context_window: 200_000 };
        await store.appendTurn(
          a,
          { ...simpleTurn(0), model },
          { compactions_version: 0 },
          {
            projected_chars: 40,
            model,
          },
        );
        clock = 2_000;
        await store.appendTurn(b, simpleTurn(0), { compactions_version: 0 }, {});
        clock = 3_000;
        await store.putConfig(c, { enabled: true });
        clock = 4_000;
        const band = compaction(0, 0, 1, { reasoning: "strip", source: "auto" });
        await store.addCompaction(
          a,
          storedCompaction("AUTO#000000", 0, 1, band),
          { turn_count: 1, compactions_version: 0 },
          { bands: { auto: 1, manual: 0 }, last_fired_at: band.timestamp },
        );
        const pages = await allPages(store, tenant, 2);
        expect(pages.map((page) => page.conversations.map((e) => e.conversation))).toEqual([
          [a.conversation, c.conversation],
          [b.conversation],
        ]);
        expect(pages[0]?.next_cursor).toEqual(expect.any(String));
        expect(pages[1]?.next_cursor).toBeUndefined();
        expect(pages[0]?.conversations[0]).toEqual({
          conversation: a.conversation,
          turn_count: 1,
          projected_chars: 40,
          model,
          bands: { auto: 1, manual: 0 },
          last_fired_at: band.timestamp,
        });
        expect(pages[0]?.conversations[1]).toEqual({
          conversation: c.conversation,
          turn_count: 0,
          projected_chars: 0,
        });
        // A reset is activity too: b moves to the front.
        clock = 5_000;
        await store.removeCompactions(a, [], { turn_count: 1, compactions_version: 1 }, {});
        clock = 6_000;
        await store.appendTurn(b, { ...simpleTurn(1), turn: 1 }, { compactions_version: 0 }, {});
        const [all] = await allPages(store, tenant, 10);
        expect(all?.conversations.map((e) => e.conversation)).toEqual([
          b.conversation,
          a.conversation,
          c.conversation,
        ]);
      });

      it("never lists another tenant's conversations, nor one being deleted", async () => {
        let clock = 10_000;
        const store = await makeStore({ now: () => clock++ });
        const tenant = `tenant-${randomUUID()}`;
        const other = `${tenant}-other`;
        const mine = [freshRef(tenant), freshRef(tenant), freshRef(tenant)];
        const theirs = freshRef(other);
        for (const ref of [...mine, theirs]) {
          await store.appendTurn(ref, simpleTurn(0), { compactions_version: 0 }, {});
        }
        await store.beginDelete(mine[1] as ConversationRef);
        const [page] = await allPages(store, tenant, 10);
        expect(page?.conversations.map((e) => e.conversation)).toEqual([
          mine[2]?.conversation,
          mine[0]?.conversation,
        ]);
        // A cursor of this tenant's list, used by another, pages that one's own list only.
        const first = await store.listConversations(tenant, { limit: 1 });
        const cursor = first.next_cursor as string;
        const seen = await store.listConversations(other, { limit: 10, cursor });
        for (const entry of seen.conversations) {
          expect(mine.map((ref) => ref.conversation)).not.toContain(entry.conversation);
        }
        expect((await allPages(store, other, 10))[0]?.conversations).toEqual([
          { conversation: theirs.conversation, turn_count: 1, projected_chars: 0 },
        ]);
        expect(await store.listConversations(`${tenant}-none`, { limit: 5 })).toEqual({
          conversations: [],
        });
      });

      it("refuses a cursor it did not give, saying so", async () => {
        const store = await makeStore();
        const tenant = `tenant-${randomUUID()}`;
        for (const cursor of [
          "not a cursor",
          Buffer.from('{"a":1}').toString("base64url"),
          Buffer.from('[-1,"x"]').toString("base64url"),
          "%%%",
        ]) {
          const listing = store.listConversations(tenant, { limit: 5, cursor });
          await expect(listing).rejects.toThrow(InvalidInputError);
          await expect(listing).rejects.toThrow(/cursor is not one this API gave/);
        }
      });
    });

    describe("evaluations on size records", () => {
      it("keeps a turn's reported usage on its size record and gives it back with the turn", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const [first, second] = sampleTurns(2, 2) as [StoredTurn, StoredTurn];
        const usage = {
          input_tokens: 12_345,
          output_tokens: 67,
          cached_input_tokens: 12_000,
          calls: 2,
          view_chars: 40_210,
        };
        await appendAll(store, ref, [first, { ...second, usage }]);
        expect(await store.listTurnSizes(ref)).toEqual([
          summaryOf(first),
          { ...summaryOf(second), usage },
        ]);
        expect((await store.getTurn(ref, 1))?.usage).toEqual(usage);
        expect((await store.getTurn(ref, 0))?.usage).toBeUndefined();
      });

      it("keeps the head's calibration sample as an append sets it", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const [first, second] = sampleTurns(3, 2) as [StoredTurn, StoredTurn];
        const calibration = {
          turns_with_usage: 1,
          points: [[1_000, 5_300]] as [number, number][],
        };
        await store.appendTurn(ref, first, { compactions_version: 0 }, { calibration });
        expect((await store.getHead(ref))?.calibration).toEqual(calibration);
        const next = {
          turns_with_usage: 2,
          points: [...calibration.points, [2_000, 5_600]] as [number, number][],
        };
        await store.appendTurn(ref, second, { compactions_version: 0 }, { calibration: next });
        expect((await store.getHead(ref))?.calibration).toEqual(next);
      });

      it("keeps a skip's evaluation on its turn's size record, not on its events", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const turns = sampleTurns(9, 4);
        await appendAll(store, ref, turns);
        const skipped = {
          turn: 2,
          outcome: "skipped" as const,
          reason: "under_threshold" as const,
        };
        await store.markEvaluated(ref, 2, skipped, { projected_chars: 1234, threshold: 150_000 });
        // Later than the turn evaluated through: recorded nowhere.
        await store.markEvaluated(
          ref,
          1,
          { turn: 1, outcome: "skipped", reason: "min_turns" },
          { projected_chars: 5, threshold: null },
        );
        const unknown = {
          turn: 3,
          outcome: "skipped" as const,
          reason: "context_window_unknown" as const,
        };
        await store.markEvaluated(ref, 3, unknown, { projected_chars: 99, threshold: null });
        expect(await store.listTurnSizes(ref)).toEqual([
          summaryOf(turns[0] as StoredTurn),
          summaryOf(turns[1] as StoredTurn),
          {
            ...summaryOf(turns[2] as StoredTurn),
            evaluation: { ...skipped, projected_chars: 1234, threshold: 150_000 },
          },
          {
            ...summaryOf(turns[3] as StoredTurn),
            evaluation: { ...unknown, projected_chars: 99, threshold: null },
          },
        ]);
        expect(await store.getHead(ref)).toMatchObject({
          evaluated_through: 3,
          last_decision: unknown,
        });
        expectTurns(await store.readTurns(ref), turns);
        expectTurns([await store.getTurn(ref, 2)], [turns[2] as StoredTurn]);
      });

      it("keeps a firing's evaluation on its turn's record in the band's own write", async () => {
        const store = await makeStore();
        const ref = freshRef();
        const turns = sampleTurns(10, 3);
        await appendAll(store, ref, turns);
        const fired = {
          turn: 2,
          outcome: "fired" as const,
          band: { key: "AUTO#000002", from_turn: 0, to_turn: 1 },
        };
        const evaluation = { ...fired, projected_chars: 800, threshold: 150 };
        // A band whose write fails records nothing.
        await expect(
          store.addCompaction(
            ref,
            storedCompaction("AUTO#000002", 2, 1),
            { turn_count: 2, compactions_version: 0 },
            {},
            evaluation,
          ),
        ).rejects.toThrow(ConditionFailedError);
        expect((await store.listTurnSizes(ref))[2]).toEqual(summaryOf(turns[2] as StoredTurn));
        await store.addCompaction(
          ref,
          storedCompaction("AUTO#000002", 2, 1),
          { turn_count: 3, compactions_version: 0 },
          { last_decision: fired },
          evaluation,
        );
        expect((await store.listTurnSizes(ref)).map((record) => record.evaluation)).toEqual([
          undefined,
          undefined,
          evaluation,
        ]);
        expectTurns(await store.readTurns(ref), turns);
      });
    });

    describe("isolation", () => {
      it("never lets two tenants see each other's conversation of the same id", async () => {
        const store = await makeStore();
        const a = freshRef();
        const b = { tenant: `${a.tenant}-other`, conversation: a.conversation };
        await store.appendTurn(
          a,
          simpleTurn(0),
          { compactions_version: 0 },
          { projected_chars: 1 },
        );
        expect(await store.getHead(b)).toBeUndefined();
        expect(await store.readTurns(b)).toEqual([]);
        await store.appendTurn(
          b,
          toolTurn(0, 100, 1),
          { compactions_version: 0 },
          { projected_chars: 2 },
        );
        await store.addCompaction(
          b,
          storedCompaction("MAN#b", 0, 0),
          { turn_count: 1, compactions_version: 0 },
          {},
        );
        await store.putConfig(b, { enabled: false });
        await store.markEvaluated(b, 0);
        expect(counted(await store.getHead(a))).toEqual({
          turn_count: 1,
          evaluated_through: -1,
          projected_chars: 1,
          compactions_version: 0,
          max_compacted_turn: -1,
        });
        expectTurns(await store.readTurns(a), [simpleTurn(0)]);
        expect(await store.listTurnSizes(a)).toEqual([summaryOf(simpleTurn(0))]);
        expect(await store.listCompactions(a)).toEqual([]);
        expectTurns(await store.readTurns(b), [toolTurn(0, 100, 1)]);
      });

      it("keeps ids apart that only differ around separators", async () => {
        const store = await makeStore();
        const id = randomUUID();
        const refs: ConversationRef[] = [
          { tenant: `${id}#C#x`, conversation: "y" },
          { tenant: id, conversation: "x#C#y" },
          { tenant: `${id}#C`, conversation: "x#C#y" },
          { tenant: `${id}%23C%23x`, conversation: "y" },
          { tenant: `${id}/é`, conversation: "日本 🚀" },
        ];
        for (const [index, ref] of refs.entries()) {
          await store.appendTurn(
            ref,
            simpleTurn(0),
            { compactions_version: 0 },
            { projected_chars: index },
          );
        }
        for (const [index, ref] of refs.entries()) {
          expect(await store.getHead(ref)).toMatchObject({ turn_count: 1, projected_chars: index });
        }
      });
    });
  });
}
