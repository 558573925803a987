/**
 * Items already in deployed tables stay readable: the raw items of one
 * conversation as the store wrote them before functions/store/dynamodb.ts was
 * split (test/fixtures/dynamodb-items-v1.json, see its generator) are loaded
 * into a fresh table with BatchWriteItem and read back with today's store,
 * against literal expectations. And today's store, storing the same
 * conversation, writes the same items.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  type AttributeValue,
  BatchWriteItemCommand,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationRef } from "../../functions/ports.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { storedTurn } from "../contract/conversation-store.contract.ts";
import {
  FIXTURE_STORE_OPTIONS,
  scanWireItems,
  storeFixtureConversation,
} from "../fixtures/dynamodb-items-v1.generate.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

type WireItem = Record<string, unknown>;

const FIXTURE: WireItem[] = JSON.parse(
  readFileSync(new URL("../fixtures/dynamodb-items-v1.json", import.meta.url), "utf8"),
);

/** The fixture's conversation: both ids need escaping in keys. */
const REF: ConversationRef = { tenant: "acme#1", conversation: "chat%7#b" };
const PK = "T#acme%231#C#chat%257%23b";
const MODEL_JSON = '{"id":"anthropic/claude-sonnet-4-5","context_window":200000}';

/** The JSON of turn `n`'s events (every turn but 2), exactly as it was posted. */
const smallTurnJson = (n: number) =>
  `[{"type":"turn_start","timestamp":"2026-01-01T00:0${n}:00Z"},{"type":"chat_request","timestamp":"2026-01-01T00:0${n}:01Z","content":"step ${n}: read the log"},{"type":"chat_response","timestamp":"2026-01-01T00:0${n}:02Z","reasoning":"I should read it (${n})."},{"type":"tool_call_request","timestamp":"2026-01-01T00:0${n}:03Z","id":"call_${n}","name":"fs_read_file","arguments":{"path":"app.log"}},{"type":"tool_call_response","timestamp":"2026-01-01T00:0${n}:04Z","id":"call_${n}","content":"log ${n}: ok ✓ 日本","is_error":false},{"type":"chat_response","timestamp":"2026-01-01T00:0${n}:05Z","message":"Done with step ${n}."}]`;
const BIG_LINE = "2026-01-01T00:02:00Z INFO build step ok: compiled module core/projection.ts\n";
/** Turn 2: 2,310,576 bytes of JSON (9 chunks of 1 KiB compressed). */
const bigTurnJson = () =>
  smallTurnJson(2).replace('"log 2: ok ✓ 日本"', () => JSON.stringify(BIG_LINE.repeat(30_000)));

const SMALL_SIZE =
  '{"text":37,"reasoning":21,"tool_requests":30,"tool_requests_stripped":14,"tool_responses":20,"tool_responses_stripped":33}';
const BIG_SIZE = SMALL_SIZE.replace('"tool_responses":20', '"tool_responses":2280000');
/** SHA-256 of each turn's events JSON (what the digest of a stored turn hashes here). */
const DIGESTS = [
  "f334ee6060b53fc5182e5a05129828517245959827171ed547732e5b3490a34a",
  "02befe1193b2f216dbfc60c3e932a16137db484a1498061ad5ee6759340f5e62",
  "5b0e1bcfb038602346115bd2cb226dbda3a4766045642c2816485b51df175135",
  "9120c34f6a7673df2510231f5eb1bb772f9b323eb996d4a869abc71c04030dd8",
  "93b35e66afb477be722a9c99a10bb68548a952a849fce6a18257ab4c05b5df94",
];
const summaryJson = (n: number) =>
  `{"turn":${n},"size":${n === 2 ? BIG_SIZE : SMALL_SIZE},"digest":"${DIGESTS[n]}","model":${MODEL_JSON}}`;

const AUTO_JSON =
  '{"key":"AUTO#000003","after_turn":3,"seq":0,"compaction":{"type":"compaction","timestamp":"2026-01-01T00:03:30Z","from_turn":0,"to_turn":1,"source":"auto","reasoning":"strip","tool_calls":{"policy":"strip","request":true,"response":true},"trigger":{"turn":3,"estimated_tokens":600000,"threshold":160000,"context_window":200000,"estimated_tokens_after":150000}}}';
const MANUAL_JSON = `{"key":"MAN#000001","after_turn":4,"seq":1,"compaction":{"type":"compaction","timestamp":"2026-01-01T00:04:30Z","from_turn":0,"to_turn":3,"source":"manual","summary":{"summary":"${"Decisions: keep file paths and error messages. ".repeat(1_500)}"}}}`;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Wire JSON (Binary as base64) to the SDK's AttributeValues. */
function fromWire(value: unknown): AttributeValue {
  const attribute = value as Record<string, unknown>;
  if (typeof attribute.B === "string") return { B: Buffer.from(attribute.B, "base64") };
  if (attribute.M !== undefined) {
    const map = attribute.M as Record<string, unknown>;
    return { M: Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fromWire(v)])) };
  }
  if (Array.isArray(attribute.L)) return { L: attribute.L.map(fromWire) };
  return attribute as unknown as AttributeValue;
}

const client = localClient();
afterAll(() => client.destroy());

async function loadFixture(table: string): Promise<void> {
  let requests: WriteRequest[] = FIXTURE.map((item) => ({
    PutRequest: {
      Item: Object.fromEntries(Object.entries(item).map(([name, v]) => [name, fromWire(v)])),
    },
  }));
  while (requests.length > 0) {
    const batch = requests.slice(0, 25);
    const { UnprocessedItems } = await client.send(
      new BatchWriteItemCommand({ RequestItems: { [table]: batch } }),
    );
    requests = [...(UnprocessedItems?.[table] ?? []), ...requests.slice(25)];
  }
}

describe("storage format v1 (test/fixtures/dynamodb-items-v1.json)", () => {
  let store: DynamoConversationStore;
  beforeAll(async () => {
    const table = await freshTable(client, "format-v1");
    await loadFixture(table);
    store = new DynamoConversationStore(client, table);
  });

  it("is the conversation it claims to be: 21 items under one escaped partition key", () => {
    expect(FIXTURE).toHaveLength(21);
    expect(new Set(FIXTURE.map((item) => (item.pk as { S: string }).S))).toEqual(new Set([PK]));
    const sks = FIXTURE.map((item) => (item.sk as { S: string }).S);
    expect(sks.filter((sk) => sk.startsWith("EVT#000000002#"))).toHaveLength(9);
    expect(sks.filter((sk) => !sk.startsWith("EVT#"))).toEqual([
      "CMP#AUTO#000003",
      "CMP#MAN#000001",
      "HEAD",
      "TURN#000000000",
      "TURN#000000001",
      "TURN#000000002",
      "TURN#000000003",
      "TURN#000000004",
    ]);
    expect(FIXTURE.find((item) => "compaction_gz" in item)?.key).toEqual({ S: "MAN#000001" });
  });

  it("reads the head", async () => {
    const head = await store.getHead(REF);
    expect(head).toEqual({
      turn_count: 5,
      evaluated_through: 4,
      projected_chars: 72_000,
      compactions_version: 2,
      max_compacted_turn: 3,
      config: {
        enabled: true,
        trigger_ratio: 0.8,
        min_turns: 3,
        rule: { keep_first: 1, keep_last: 2 },
      },
      stream_config: { trigger_ratio: 0.7 },
      model: { id: "anthropic/claude-sonnet-4-5", context_window: 200_000 },
    });
    expect(JSON.stringify(head?.model)).toBe(MODEL_JSON);
  });

  it("reads every turn's summary, in order, key order kept", async () => {
    const summaries = await store.listTurnSizes(REF);
    expect(summaries.map((summary) => JSON.stringify(summary))).toEqual(
      [0, 1, 2, 3, 4].map(summaryJson),
    );
  });

  it("reads every turn byte-exact, the 2.3 MB chunked one included", async () => {
    const turns = await store.readTurns(REF);
    expect(turns.map((turn) => turn.turn)).toEqual([0, 1, 2, 3, 4]);
    for (const turn of turns) {
      const json = JSON.stringify(turn.events);
      expect(sha256(json)).toBe(DIGESTS[turn.turn]);
      expect(json).toBe(turn.turn === 2 ? bigTurnJson() : smallTurnJson(turn.turn));
      const { events: _events, ...summary } = turn;
      expect(JSON.stringify(summary)).toBe(summaryJson(turn.turn));
    }
    expect(Buffer.byteLength(JSON.stringify(turns[2]?.events))).toBe(2_310_576);
    const big = await store.getTurn(REF, 2);
    expect(sha256(JSON.stringify(big?.events))).toBe(DIGESTS[2]);
    expect(
      (await store.readTurns(REF, 1, 3)).map((turn) => sha256(JSON.stringify(turn.events))),
    ).toEqual(DIGESTS.slice(1, 4));
  });

  it("reads the compactions in stream order, inline and gzipped", async () => {
    const compactions = await store.listCompactions(REF);
    expect(compactions.map((compaction) => JSON.stringify(compaction))).toEqual([
      AUTO_JSON,
      MANUAL_JSON,
    ]);
  });

  it("goes on from there: the next turn and a compaction reset land on the v1 head", async () => {
    const turn5 = storedTurn(5, JSON.parse(smallTurnJson(5)));
    await store.appendTurn(REF, turn5, { compactions_version: 2 }, { projected_chars: 73_000 });
    // A v1 head has no incarnation; its next turn gives it one (ports.ts), kept from then on.
    const { incarnation } = (await store.getHead(REF)) ?? {};
    expect(incarnation).toEqual(expect.stringMatching(/^\S+$/));
    await store.removeCompactions(
      REF,
      ["MAN#000001"],
      { turn_count: 6, compactions_version: 2 },
      { max_compacted_turn: 1 },
    );
    expect(await store.getHead(REF)).toMatchObject({
      turn_count: 6,
      compactions_version: 3,
      max_compacted_turn: 1,
      projected_chars: 73_000,
    });
    expect((await store.listCompactions(REF)).map((c) => c.key)).toEqual(["AUTO#000003"]);
    expect((await store.getHead(REF))?.incarnation).toBe(incarnation);
    expect(JSON.stringify((await store.getTurn(REF, 5))?.events)).toBe(smallTurnJson(5));
  });
});

describe("storage format v1, written by today's store", () => {
  it("stores the fixture's conversation as the same items (but for committed_at and the list index's keys)", async () => {
    const table = await freshTable(client, "format-v1-write");
    await storeFixtureConversation(
      new DynamoConversationStore(client, table, FIXTURE_STORE_OPTIONS),
    );
    const written = (await scanWireItems(client, table)) as WireItem[];
    const withoutTime = (items: WireItem[]) =>
      items.map(({ committed_at, ...rest }) => {
        if ((rest.sk as { S: string }).S.startsWith("TURN#")) {
          expect(committed_at).toEqual({ N: expect.stringMatching(/^\d{13}$/) });
        }
        return rest;
      });
    // The HEAD's list index keys (added after v1, on every write): the tenant and a time;
    // and its incarnation (added after v1, random, on the write that creates the head).
    const head = written.find((item) => (item.sk as { S: string }).S === "HEAD");
    const { list_pk, active_at, incarnation, ...v1Head } = head ?? {};
    expect(list_pk).toEqual({ S: "T#acme%231" });
    expect(active_at).toEqual({ N: expect.stringMatching(/^\d{13}$/) });
    expect(incarnation).toEqual({ S: expect.stringMatching(/^\S+$/) });
    const v1 = written.map((item) => (item === head ? v1Head : item));
    expect(withoutTime(v1)).toEqual(withoutTime(FIXTURE));
  });
});
