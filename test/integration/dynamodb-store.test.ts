/**
 * What the contract suite cannot see of the DynamoDB store: its item layout,
 * which items each read touches, the two-step write of turns too big for one
 * transaction (racing losers, crashed writers, orphan chunks), integrity
 * checks, how a delete purges the partition, and DynamoDB's limits. Runs on DynamoDB Local.
 */
import {
  DeleteItemCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../core/errors.ts";
import { projectedCharsFromSizes } from "../../core/sizes.ts";
import { MAX_TURN } from "../../core/turns.ts";
import { ConversationLog } from "../../functions/conversations/log.ts";
import { ConditionFailedError, ContentionError, CorruptDataError } from "../../functions/errors.ts";
import { listUnevaluatedConversations } from "../../functions/local/unevaluated-conversations.ts";
import type { ConversationRef } from "../../functions/ports.ts";
import {
  DynamoConversationStore,
  type DynamoStoreOptions,
} from "../../functions/store/dynamodb.ts";
import { parsePartitionKey, partitionKey } from "../../functions/store/dynamodb-keys.ts";
import { createTable } from "../../functions/store/dynamodb-table.ts";
import { freshRef, noise, storedTurn } from "../contract/conversation-store.contract.ts";
import { compaction, message, request, toolResult, turnStart } from "../helpers/builders.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

const client = localClient();
let table: string;
beforeAll(async () => {
  table = await freshTable(client, "store");
});
afterAll(() => client.destroy());

/** Small chunks and a small transaction budget: the two-step path with little data. */
const TWO_STEP: DynamoStoreOptions = { chunkBytes: 4096, maxTransactionBytes: 8192 };

/** A store over a client that records every command and may fail some. */
function spiedStore(options: DynamoStoreOptions = {}, fail?: (name: string) => Error | undefined) {
  const spied = localClient();
  const real = spied.send.bind(spied) as (command: unknown) => Promise<unknown>;
  const commands: { name: string; input: Record<string, unknown> }[] = [];
  (spied as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (command) => {
    const { input } = command as { input: Record<string, unknown> };
    const name = (command as { constructor: { name: string } }).constructor.name;
    commands.push({ name, input });
    const error = fail?.(name);
    if (error) throw error;
    return real(command);
  };
  const store = new DynamoConversationStore(spied, table, options);
  return { store, commands, close: () => spied.destroy() };
}

async function sortKeys(db: DynamoDBClient, ref: ConversationRef): Promise<string[]> {
  const keys: string[] = [];
  let start: Record<string, never> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: partitionKey(ref) } },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) keys.push(item.sk?.S ?? "");
    start = page.LastEvaluatedKey as typeof start;
  } while (start);
  return keys;
}

const chunkKeys = async (ref: ConversationRef) =>
  (await sortKeys(client, ref)).filter((sk) => sk.startsWith("EVT#"));

/** Every event chunk of the conversation as stored: its sort key and `expires_at`, if any. */
async function chunkExpiries(ref: ConversationRef) {
  const page = await client.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :evt)",
      ExpressionAttributeValues: { ":pk": { S: partitionKey(ref) }, ":evt": { S: "EVT#" } },
      ConsistentRead: true,
    }),
  );
  return (page.Items ?? []).map((item) => ({
    sk: item.sk?.S,
    expires_at: item.expires_at?.N === undefined ? undefined : Number(item.expires_at.N),
  }));
}

const small = (n: number) =>
  storedTurn(n, [turnStart(n), request(`q${n}`, n), message(`m${n}`, n)]);
/** About 40 KB of barely compressible events: ~10 chunks of 4 KB under {@link TWO_STEP}. */
const big = (n: number, seed: number) =>
  storedTurn(n, [turnStart(n), toolResult(`t${n}`, noise(seed, 40_000), false, n)]);

describe("DynamoConversationStore layout", () => {
  it("stores head, turns, event chunks and compactions under one escaped partition key", async () => {
    const ref = { tenant: `a#C#b%-${Date.now()}`, conversation: "c#1" };
    const store = new DynamoConversationStore(client, table);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    await store.appendTurn(ref, small(1), { compactions_version: 0 }, {});
    await store.addCompaction(
      ref,
      {
        key: "AUTO#000001",
        after_turn: 1,
        seq: 0,
        compaction: compaction(0, 0, 1, { reasoning: "strip" }),
      },
      { turn_count: 2, compactions_version: 0 },
      {},
    );
    expect(partitionKey(ref)).toBe(`T#a%23C%23b%25-${ref.tenant.slice(7)}#C#c%231`);
    const keys = await sortKeys(client, ref);
    expect(keys).toHaveLength(6);
    expect(keys.filter((sk) => !sk.startsWith("EVT#"))).toEqual([
      "CMP#AUTO#000001",
      "HEAD",
      "TURN#000000000",
      "TURN#000000001",
    ]);
    for (const sk of keys.filter((k) => k.startsWith("EVT#"))) {
      expect(sk).toMatch(/^EVT#00000000[01]#[0-9a-f]{32}#c0000$/);
    }
  });

  it("lists turn sizes and reads the head without touching event chunks", async () => {
    const ref = freshRef();
    await new DynamoConversationStore(client, table).appendTurn(
      ref,
      big(0, 1),
      { compactions_version: 0 },
      {},
    );
    const { store, commands, close } = spiedStore();
    expect(await store.listTurnSizes(ref)).toHaveLength(1);
    await store.getHead(ref);
    const touched = JSON.stringify(commands.map((c) => c.input));
    expect(touched).not.toContain("EVT#");
    expect(commands.map((c) => c.name)).toEqual(["QueryCommand", "GetItemCommand"]);
    close();
  });

  it("rejects ids and turns that cannot be keys", async () => {
    const store = new DynamoConversationStore(client, table);
    await expect(store.getHead({ tenant: "bad\ud800", conversation: "c" })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(
      store.appendTurn(freshRef(), small(MAX_TURN + 1), { compactions_version: 0 }, {}),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(await store.getTurn(freshRef(), -1)).toBeUndefined();
    expect(await store.getTurn(freshRef(), 1.5)).toBeUndefined();
  });
});

describe("DynamoConversationStore turns too big for one transaction", () => {
  it("writes the chunks first, then commits turn and head in one transaction", async () => {
    const ref = freshRef();
    const { store, commands, close } = spiedStore(TWO_STEP);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    commands.length = 0;
    await store.appendTurn(ref, big(1, 2), { compactions_version: 0 }, { projected_chars: 5 });
    const chunks = commands.filter((c) => c.name === "PutItemCommand").length;
    expect(chunks).toBeGreaterThan(2);
    expect(commands.map((c) => c.name)).toEqual([
      "GetItemCommand",
      ...Array(chunks).fill("PutItemCommand"),
      "TransactWriteItemsCommand",
    ]);
    // TURN, HEAD, and one update per chunk making it permanent.
    const commit = commands.at(-1)?.input.TransactItems as Record<string, unknown>[];
    expect(commit).toHaveLength(2 + chunks);
    for (const item of commit.slice(2)) {
      expect(item.Update).toMatchObject({
        UpdateExpression: "REMOVE #expires_at",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeNames: { "#expires_at": "expires_at" },
      });
    }
    expect(await chunkKeys(ref)).toHaveLength(chunks + 1);
    expect(JSON.stringify((await store.getTurn(ref, 1))?.events)).toBe(
      JSON.stringify(big(1, 2).events),
    );
    close();
  });

  it("fails fast, writing nothing, when the head has moved on", async () => {
    const ref = freshRef();
    const { store, commands, close } = spiedStore(TWO_STEP);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    commands.length = 0;
    await expect(
      store.appendTurn(ref, big(0, 3), { compactions_version: 0 }, {}),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    await expect(
      store.appendTurn(ref, big(1, 3), { compactions_version: 4 }, {}),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(commands.map((c) => c.name)).toEqual(["GetItemCommand", "GetItemCommand"]);
    close();
  });

  it("deletes a losing racer's chunks and keeps the winner's", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    const candidates = [big(0, 10), big(0, 11), big(0, 12)];
    const results = await Promise.allSettled(
      candidates.map((t) => store.appendTurn(ref, t, { compactions_version: 0 }, {})),
    );
    const winner = results.findIndex((r) => r.status === "fulfilled");
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const stored = await store.getTurn(ref, 0);
    expect(stored?.digest).toBe(candidates[winner]?.digest);
    const prefixes = new Set((await chunkKeys(ref)).map((sk) => sk.split("#")[2]));
    expect(prefixes.size).toBe(1);
  });

  it("lets identical racers share their chunks", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    const results = await Promise.allSettled(
      [0, 1, 2].map(() => store.appendTurn(ref, big(0, 20), { compactions_version: 0 }, {})),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(JSON.stringify((await store.getTurn(ref, 0))?.events)).toBe(
      JSON.stringify(big(0, 20).events),
    );
  });

  it("ignores the orphan chunks of a writer that crashed before committing", async () => {
    const ref = freshRef();
    let crash = true;
    const crashing = spiedStore(TWO_STEP, (name) => {
      if (name !== "TransactWriteItemsCommand" || !crash) return undefined;
      crash = false;
      return new Error("Lambda timed out");
    });
    await expect(
      crashing.store.appendTurn(ref, big(0, 30), { compactions_version: 0 }, {}),
    ).rejects.toThrow("timed out");
    const orphans = await chunkKeys(ref);
    expect(orphans.length).toBeGreaterThan(2);
    expect(await crashing.store.getHead(ref)).toBeUndefined();
    expect(await crashing.store.readTurns(ref)).toEqual([]);
    // Another turn 0 lands; readers follow its chunks only.
    await crashing.store.appendTurn(ref, big(0, 31), { compactions_version: 0 }, {});
    await crashing.store.appendTurn(ref, big(1, 30), { compactions_version: 0 }, {});
    const read = await crashing.store.readTurns(ref);
    expect(read.map((t) => t.digest)).toEqual([big(0, 31).digest, big(1, 30).digest]);
    // A retry of the crashed turn itself overwrites its own chunks in place.
    const other = freshRef();
    crash = true;
    await expect(
      crashing.store.appendTurn(other, big(0, 32), { compactions_version: 0 }, {}),
    ).rejects.toThrow();
    const before = await chunkKeys(other);
    await crashing.store.appendTurn(other, big(0, 32), { compactions_version: 0 }, {});
    expect(await chunkKeys(other)).toEqual(before);
    expect((await crashing.store.getTurn(other, 0))?.digest).toBe(big(0, 32).digest);
    crashing.close();
  });

  it("lets a crashed writer's chunks expire and never a committed turn's, a late identical writer's included", async () => {
    const ref = freshRef();
    const crashing = spiedStore(TWO_STEP, (name) =>
      name === "TransactWriteItemsCommand" ? new Error("Lambda timed out") : undefined,
    );
    const before = Math.floor(Date.now() / 1000);
    await expect(
      crashing.store.appendTurn(ref, big(0, 33), { compactions_version: 0 }, {}),
    ).rejects.toThrow("timed out");
    const after = Math.floor(Date.now() / 1000);
    crashing.close();
    const orphans = await chunkExpiries(ref);
    expect(orphans.length).toBeGreaterThan(2);
    for (const { expires_at } of orphans) {
      // 24 hours from the write.
      expect(expires_at).toBeGreaterThanOrEqual(before + 86_400);
      expect(expires_at).toBeLessThanOrEqual(after + 86_400);
    }
    // The retry commits the same chunks: the commit made them permanent.
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    await store.appendTurn(ref, big(0, 33), { compactions_version: 0 }, {});
    const committed = await chunkExpiries(ref);
    expect(committed.map((c) => c.sk)).toEqual(orphans.map((c) => c.sk));
    expect(committed.every((c) => c.expires_at === undefined)).toBe(true);

    // A late writer of the same turn that read the head before that commit
    // puts the same chunks again: they stay permanent, and its commit fails.
    const late = localClient();
    const send = late.send.bind(late) as (command: unknown) => Promise<unknown>;
    (late as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (command) =>
      command instanceof GetItemCommand ? {} : send(command);
    await expect(
      new DynamoConversationStore(late, table, TWO_STEP).appendTurn(
        ref,
        big(0, 33),
        { compactions_version: 0 },
        {},
      ),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    late.destroy();
    expect(await chunkExpiries(ref)).toEqual(committed);
    expect((await store.getTurn(ref, 0))?.digest).toBe(big(0, 33).digest);
  });

  it("refuses a turn whose chunks one commit cannot make permanent, before writing any", async () => {
    const ref = freshRef();
    const { store, commands, close } = spiedStore(TWO_STEP);
    // About 500 KB compressed: more than 98 chunks of 4 KB.
    const huge = storedTurn(0, [turnStart(0), toolResult("t0", noise(70, 700_000), false, 0)]);
    await expect(store.appendTurn(ref, huge, { compactions_version: 0 }, {})).rejects.toMatchObject(
      {
        name: "UnprocessableError",
        status: 422,
        type: "/problems/too-large-to-store",
      },
    );
    expect(commands).toEqual([]);
    close();
    expect(await sortKeys(client, ref)).toEqual([]);
  });

  it("reports missing or altered chunks instead of returning wrong events", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    await store.appendTurn(ref, big(0, 40), { compactions_version: 0 }, {});
    await store.appendTurn(ref, big(1, 41), { compactions_version: 0 }, {});
    const [first, second] = await chunkKeys(ref);
    await client.send(
      new DeleteItemCommand({
        TableName: table,
        Key: { pk: { S: partitionKey(ref) }, sk: { S: first as string } },
      }),
    );
    await expect(store.getTurn(ref, 0)).rejects.toBeInstanceOf(CorruptDataError);
    await expect(store.readTurns(ref)).rejects.toBeInstanceOf(CorruptDataError);
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: partitionKey(ref) },
          sk: { S: first as string },
          chunk: { N: "0" },
          data: { B: new Uint8Array(4096) },
        },
      }),
    );
    await expect(store.getTurn(ref, 0)).rejects.toThrow(/hash/);
    expect(second).toBeDefined();
    expect((await store.getTurn(ref, 1))?.digest).toBe(big(1, 41).digest);
  });
});

describe("the local runtime's recovery scan", () => {
  it("lists the conversations whose latest turn is not evaluated yet", async () => {
    const store = new DynamoConversationStore(client, table);
    const pending = { tenant: "t#%23", conversation: `c#${Date.now()}` };
    const done = freshRef();
    const behind = freshRef();
    for (const ref of [pending, done, behind]) {
      await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
      await store.appendTurn(ref, small(1), { compactions_version: 0 }, {});
    }
    await store.markEvaluated(done, 1);
    await store.markEvaluated(behind, 0);
    await store.putConfig(freshRef(), { enabled: true });
    const listed = await listUnevaluatedConversations(client, table);
    // Each with its head's life, so the message is not taken for an earlier life's duplicate.
    const life = async (ref: ConversationRef) => (await store.getHead(ref))?.incarnation;
    expect(listed).toContainEqual({ ...pending, turn: 1, incarnation: await life(pending) });
    expect(listed).toContainEqual({ ...behind, turn: 1, incarnation: await life(behind) });
    expect(listed.filter((item) => item.conversation === done.conversation)).toEqual([]);
    expect(parsePartitionKey(partitionKey(pending))).toEqual(pending);
    expect(parsePartitionKey("TENANT#x")).toBeUndefined();
  });
});

describe("DynamoConversationStore delete", () => {
  it("leaves no item in the partition, a crashed writer's orphan chunks included, through conditional transactions", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    let crash = true;
    const crashing = spiedStore(TWO_STEP, (name) => {
      if (name !== "TransactWriteItemsCommand" || !crash) return undefined;
      crash = false;
      return new Error("Lambda timed out");
    });
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    await expect(
      crashing.store.appendTurn(ref, big(1, 50), { compactions_version: 0 }, {}),
    ).rejects.toThrow("timed out");
    crashing.close();
    await store.appendTurn(ref, big(1, 51), { compactions_version: 0 }, {});
    await store.putConfig(ref, { enabled: true });
    const before = await sortKeys(client, ref);
    expect(before.filter((sk) => !sk.startsWith("EVT#"))).toEqual([
      "HEAD",
      "TURN#000000000",
      "TURN#000000001",
    ]);
    // Turn 0's chunk, the crashed writer's eight and turn 1's eight.
    expect(before.filter((sk) => sk.startsWith("EVT#"))).toHaveLength(17);

    const { store: deleting, commands, close } = spiedStore(TWO_STEP);
    expect(await deleting.beginDelete(ref)).toBe(true);
    await deleting.finishDelete(ref);
    close();
    expect(await sortKeys(client, ref)).toEqual([]);
    expect(commands.map((c) => c.name)).toEqual([
      "UpdateItemCommand",
      "GetItemCommand",
      "QueryCommand",
      "TransactWriteItemsCommand",
      "DeleteItemCommand",
    ]);
    const [, , query, purge, head] = commands as { input: Record<string, unknown> }[];
    expect(query?.input).toMatchObject({ ProjectionExpression: "sk", ConsistentRead: true });
    const items = purge?.input.TransactItems as Record<string, { Key: unknown }>[];
    // The HEAD's ConditionCheck, then 17 chunks and 2 turns.
    expect(items).toHaveLength(20);
    expect(items[0]?.ConditionCheck).toMatchObject({
      Key: { sk: { S: "HEAD" } },
      ConditionExpression: "#deleting = :token",
    });
    expect(items.slice(1).every((item) => item.Delete !== undefined)).toBe(true);
    expect(head?.input).toMatchObject({
      Key: { sk: { S: "HEAD" } },
      ConditionExpression: "#deleting = :token",
    });
  });

  it("finishes a purge that crashed midway on the next delete", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table);
    for (let t = 0; t < 120; t++)
      await store.appendTurn(ref, small(t), { compactions_version: 0 }, {});
    expect(await sortKeys(client, ref)).toHaveLength(241);
    let transactions = 0;
    const crashing = spiedStore({}, (name) =>
      name === "TransactWriteItemsCommand" && ++transactions === 2
        ? new Error("Lambda timed out")
        : undefined,
    );
    expect(await crashing.store.beginDelete(ref)).toBe(true);
    await expect(crashing.store.finishDelete(ref)).rejects.toThrow("timed out");
    crashing.close();
    // The first 99 items are gone; the tombstone and the rest are left.
    const left = await sortKeys(client, ref);
    expect(left).toHaveLength(142);
    expect(left).toContain("HEAD");
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 120, deleting: true });
    await expect(
      store.appendTurn(ref, small(120), { compactions_version: 1 }, {}),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(await store.beginDelete(ref)).toBe(true);
    await store.finishDelete(ref);
    expect(await sortKeys(client, ref)).toEqual([]);
  }, 60_000);

  it("never lets a late purge touch the conversation that began after another delete finished", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    await store.appendTurn(ref, small(1), { compactions_version: 0 }, {});
    // A slow delete: it lists the keys, then stalls before its first purge transaction.
    let release = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    let listed = () => {};
    const keysListed = new Promise<void>((resolve) => {
      listed = resolve;
    });
    const slowClient = localClient();
    const send = slowClient.send.bind(slowClient) as (command: unknown) => Promise<unknown>;
    (slowClient as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (
      command,
    ) => {
      if (command instanceof TransactWriteItemsCommand) {
        listed();
        await stalled;
      }
      return send(command);
    };
    const slow = new DynamoConversationStore(slowClient, table);
    expect(await slow.beginDelete(ref)).toBe(true);
    const late = slow.finishDelete(ref);
    await keysListed;
    // Meanwhile another delete finishes, and turn 0 starts a new conversation under the same keys.
    await store.finishDelete(ref);
    expect(await sortKeys(client, ref)).toEqual([]);
    const fresh = storedTurn(0, [turnStart(0), request("a new start", 0), message("ok", 0)]);
    await store.appendTurn(ref, fresh, { compactions_version: 0 }, {});
    release();
    await late;
    slowClient.destroy();
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 1, compactions_version: 0 });
    expect((await store.readTurns(ref)).map((t) => t.digest)).toEqual([fresh.digest]);
    expect((await sortKeys(client, ref)).filter((sk) => !sk.startsWith("EVT#"))).toEqual([
      "HEAD",
      "TURN#000000000",
    ]);
  });

  it("refuses a turn too big for one transaction before writing its chunks, once the delete began", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table, TWO_STEP);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    expect(await store.beginDelete(ref)).toBe(true);
    await expect(store.appendTurn(ref, big(1, 60), { compactions_version: 1 }, {})).rejects.toThrow(
      /being deleted/,
    );
    expect(await chunkKeys(ref)).toHaveLength(1);
    await store.finishDelete(ref);
    expect(await sortKeys(client, ref)).toEqual([]);
  });
});

describe("a reset of more compactions than one transaction removes", () => {
  it("interrupted after its first transaction, is reported, recorded on the head, and finished by the next write", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table);
    const log = new ConversationLog(store);
    for (let t = 0; t < 3; t++) await log.appendUncovered(ref, small(t));
    const keys = Array.from({ length: 95 }, (_, i) => `MAN#${String(i + 1).padStart(3, "0")}`);
    for (const [i, key] of keys.entries()) {
      await log.update(ref, "compact", async () => ({
        write: {
          kind: "add_compaction",
          compaction: {
            key,
            after_turn: 2,
            seq: i + 1,
            compaction: compaction(0, 1, i + 1, { reasoning: "strip" }),
          },
        },
        result: undefined,
      }));
    }
    const chars = async () => {
      const sizes = (await store.listTurnSizes(ref)).map((r) => r.size);
      const compactions = (await store.listCompactions(ref)).map((c) => c.compaction);
      return projectedCharsFromSizes(sizes, compactions);
    };
    // The second transaction fails for good (the SDK's retries spent).
    let transactions = 0;
    const crashing = spiedStore({}, (name) =>
      name === "TransactWriteItemsCommand" && ++transactions === 2
        ? new Error("ProvisionedThroughputExceededException")
        : undefined,
    );
    const reset = (on: ConversationLog) =>
      on.update(ref, "reset", async (snapshot) => {
        const all = (await snapshot.compactions()).map((c) => c.key);
        return all.length === 0
          ? { result: all }
          : { write: { kind: "remove_compactions" as const, keys: all }, result: all };
      });
    const error = await reset(new ConversationLog(crashing.store)).catch((e: unknown) => e);
    crashing.close();
    expect(error).toBeInstanceOf(ContentionError);
    expect(error).toMatchObject({
      status: 503,
      message:
        "reset interrupted after removing 90 of 95 compactions: the other 5 are recorded on the conversation and removed by its next write; retry the request to finish the reset",
    });
    // The head is consistent with the 5 left, and records them as still to remove.
    const { Item: raw } = await client.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: { S: partitionKey(ref) }, sk: { S: "HEAD" } },
        ConsistentRead: true,
      }),
    );
    expect(raw?.removing).toEqual({ L: keys.slice(90).map((key) => ({ S: key })) });
    expect((await store.listCompactions(ref)).map((c) => c.key)).toEqual(keys.slice(90));
    expect((await store.getHead(ref))?.projected_chars).toBe(await chars());

    // Any later write through the log (here the client's retry) finishes it first.
    expect(await reset(log)).toEqual([]);
    expect(await store.listCompactions(ref)).toEqual([]);
    const head = await store.getHead(ref);
    expect(head).toMatchObject({ max_compacted_turn: -1, projected_chars: await chars() });
    expect(head && "removing" in head).toBe(false);
  }, 60_000);
});

describe("DynamoConversationStore limits", () => {
  it("stores large compactions compressed and refuses ones no item can hold", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    const summary = `${"keep decisions and file paths. ".repeat(8_000)}${noise(5, 20_000)}`;
    const large = {
      key: "MAN#large",
      after_turn: 0,
      seq: 0,
      compaction: compaction(0, 0, 1, { summary: { summary } }),
    };
    await store.addCompaction(ref, large, { turn_count: 1, compactions_version: 0 }, {});
    expect(JSON.stringify(await store.listCompactions(ref))).toBe(JSON.stringify([large]));
    const huge = {
      ...large,
      key: "MAN#huge",
      compaction: compaction(0, 0, 2, { summary: { summary: noise(6, 600_000) } }),
    };
    await expect(
      store.addCompaction(ref, huge, { turn_count: 1, compactions_version: 1 }, {}),
    ).rejects.toMatchObject({
      name: "UnprocessableError",
      status: 422,
      type: "/problems/too-large-to-store",
    });
  });

  it("removes up to 99 compactions in one transaction and refuses more", async () => {
    const ref = freshRef();
    const store = new DynamoConversationStore(client, table);
    await store.appendTurn(ref, small(0), { compactions_version: 0 }, {});
    const keys = Array.from({ length: 99 }, (_, i) => `MAN#${i}`);
    await store.removeCompactions(
      ref,
      [...keys, ...keys],
      { turn_count: 1, compactions_version: 0 },
      {},
    );
    expect((await store.getHead(ref))?.compactions_version).toBe(1);
    await expect(
      store.removeCompactions(
        ref,
        [...keys, "MAN#99"],
        { turn_count: 1, compactions_version: 1 },
        {},
      ),
    ).rejects.toMatchObject({
      name: "UnprocessableError",
      status: 422,
      type: "/problems/too-large-to-store",
    });
  });

  it("creates a table once and validates its name", async () => {
    const name = `create-${Date.now()}`;
    expect(await createTable(client, name)).toEqual({ created: true });
    expect(await createTable(client, name)).toEqual({ created: false });
    const { TimeToLiveDescription } = await client.send(
      new DescribeTimeToLiveCommand({ TableName: name }),
    );
    expect(TimeToLiveDescription).toEqual({
      AttributeName: "expires_at",
      TimeToLiveStatus: "ENABLED",
    });
    await expect(createTable(client, "ab")).rejects.toThrow(/3 to 255/);
  });
});
