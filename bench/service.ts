/**
 * Service benchmarks on DynamoDB Local (in memory), printed as JSON lines:
 * - the webhook (POST …/turns) median and p99, over HTTP on the local runtime
 *   (with the compactor evaluating every turn meanwhile) and as the handler
 *   alone (the same app in process, as on Lambda), next to a bare PutItem's
 *   p99 in the same run (target: within 3×); the handler also with the same
 *   turns posted as OpenAI Chat messages;
 * - the evaluation latency at turn 10 and turn 200 of conversations with
 *   ~25 KB per turn, and the bytes of items the no-fire evaluation reads
 *   (target: the same at any length).
 */
import { performance } from "node:perf_hooks";
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { DEFAULT_DEV_KEY } from "../cli/commands/serve.ts";
import type { Entry } from "../core/events.ts";
import { openaiChat } from "../core/formats/openai-chat.ts";
import { streamToTranscript } from "../core/formats/transcripts.ts";
import { createApp } from "../functions/api/app.ts";
import { evaluateTurn } from "../functions/compactor/evaluate-turn.ts";
import { ConversationService } from "../functions/conversations/service.ts";
import { hashApiKey } from "../functions/keys.ts";
import { localClientConfig } from "../functions/local/dynamodb-local.ts";
import { startLocalService } from "../functions/local/runtime.ts";
import { DynamoConversationStore } from "../functions/store/dynamodb.ts";
import { createTable } from "../functions/store/dynamodb-table.ts";
import { StaticTenantDirectory } from "../functions/store/tenants-memory.ts";
import { MemoryWebhookReceipts } from "../functions/store/webhook-receipts-memory.ts";
import { prng, text } from "../test/helpers/conversation.ts";
import { RecordingQueue } from "../test/helpers/service.ts";

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const round = (ms: number) => Number(ms.toFixed(2));

/** A turn of about `bytes` bytes: a request, reasoning, a tool call with a large result, a message. */
function turnOfSize(turn: number, bytes: number, seed: number): Entry[] {
  const r = prng(seed * 1000 + turn);
  const at = (s: number) =>
    new Date(Date.UTC(2026, 10, 1) + turn * 60_000 + s * 1000).toISOString();
  const payload = text(r, Math.round(bytes / 7.5));
  return [
    { type: "turn_start", timestamp: at(0) },
    { type: "chat_request", timestamp: at(1), content: `step ${turn}: ${text(r, 12)}` },
    { type: "chat_response", timestamp: at(2), reasoning: text(r, 60) },
    {
      type: "tool_call_request",
      timestamp: at(3),
      id: `call_${turn}`,
      name: "fs_read_file",
      arguments: { path: `src/file_${turn}.ts` },
    },
    {
      type: "tool_call_response",
      timestamp: at(4),
      id: `call_${turn}`,
      content: payload,
      is_error: false,
    },
    { type: "chat_response", timestamp: at(5), message: text(r, 30) },
  ];
}

/** Counts the bytes of items every DynamoDB read returns. */
function countReadBytes(client: DynamoDBClient): { bytes: number; requests: number } {
  const counter = { bytes: 0, requests: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const output = result.output as { Item?: unknown; Items?: unknown; Responses?: unknown };
      const items = output.Item ?? output.Items ?? output.Responses;
      if (items !== undefined) {
        counter.requests++;
        counter.bytes += JSON.stringify(items).length;
      }
      return result;
    },
    { step: "initialize", name: "countReadBytes" },
  );
  return counter;
}

async function benchWebhook(): Promise<Record<string, unknown>[]> {
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir: "",
    inMemory: true,
    devKey: DEFAULT_DEV_KEY,
  });
  try {
    const headers = {
      authorization: `Bearer ${DEFAULT_DEV_KEY}`,
      "content-type": "application/json",
    };
    const latencies: number[] = [];
    for (let c = 0; c < 10; c++) {
      for (let t = 0; t < 30; t++) {
        const body = JSON.stringify({
          turn: t,
          model: { context_window: 200_000 },
          events: turnOfSize(t, 4_000, c),
        });
        const start = performance.now();
        const response = await fetch(`${service.url}/v1/conversations/bench-${c}/turns`, {
          method: "POST",
          headers,
          body,
        });
        await response.arrayBuffer();
        latencies.push(performance.now() - start);
        if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
      }
    }
    const client = new DynamoDBClient(
      localClientConfig({
        endpoint: service.dynamoEndpoint,
        credentials: service.dynamoCredentials,
      }),
    );
    const puts: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = performance.now();
      await client.send(
        new PutItemCommand({
          TableName: "autocompact",
          Item: { pk: { S: `bench#${i}` }, sk: { S: "x" }, data: { S: "y".repeat(4_000) } },
        }),
      );
      puts.push(performance.now() - start);
    }
    // The handler alone, as the Lambda runs it: the same app in process
    // (app.request), same DynamoDB Local, no HTTP hop and no compactor at work.
    const store = new DynamoConversationStore(client, "autocompact");
    const app = createApp({
      webhookReceipts: new MemoryWebhookReceipts(),
      service: new ConversationService({ store, queue: new RecordingQueue() }),
      tenants: new StaticTenantDirectory([
        { id: "bench", key_hashes: [hashApiKey(DEFAULT_DEV_KEY)] },
      ]),
    });
    const handlerLatencies = async (prefix: string, body: (c: number, t: number) => unknown) => {
      const samples: number[] = [];
      for (let c = 0; c < 10; c++) {
        for (let t = 0; t < 30; t++) {
          const text = JSON.stringify(body(c, t));
          const start = performance.now();
          const response = await app.request(`/v1/conversations/${prefix}-${c}/turns`, {
            method: "POST",
            headers,
            body: text,
          });
          await response.arrayBuffer();
          samples.push(performance.now() - start);
          if (response.status !== 202) throw new Error(`handler answered ${response.status}`);
        }
      }
      return samples;
    };
    const model = { context_window: 200_000 };
    const handler = await handlerLatencies("handler", (c, t) => ({
      turn: t,
      model,
      events: turnOfSize(t, 4_000, c),
    }));
    // The same turns posted as OpenAI Chat messages (Chat carries no reasoning).
    const chat = await handlerLatencies("chat", (c, t) => ({
      turn: t,
      model,
      format: "openai-chat",
      messages: streamToTranscript(openaiChat, turnOfSize(t, 4_000, c))[0],
    }));
    client.destroy();
    const webhookP99 = percentile(latencies.slice(20), 99);
    const handlerP99 = percentile(handler.slice(20), 99);
    const putP99 = percentile(puts.slice(20), 99);
    return [
      {
        bench: "service.webhook_latency",
        requests: latencies.length,
        turn_bytes: 4_000,
        webhook_http_median_ms: round(percentile(latencies.slice(20), 50)),
        webhook_http_p99_ms: round(webhookP99),
        webhook_handler_median_ms: round(percentile(handler.slice(20), 50)),
        webhook_handler_p99_ms: round(handlerP99),
        webhook_handler_openai_chat_median_ms: round(percentile(chat.slice(20), 50)),
        webhook_handler_openai_chat_p99_ms: round(percentile(chat.slice(20), 99)),
        put_item_median_ms: round(percentile(puts.slice(20), 50)),
        put_item_p99_ms: round(putP99),
        http_p99_ratio: round(webhookP99 / putP99),
        handler_p99_ratio: round(handlerP99 / putP99),
        target_ratio: 3,
      },
    ];
  } finally {
    await service.stop();
  }
}

async function benchEvaluation(): Promise<Record<string, unknown>[]> {
  const { startDynamoDbLocal } = await import("../functions/local/dynamodb-local.ts");
  const dynamo = await startDynamoDbLocal({});
  const client = new DynamoDBClient(localClientConfig(dynamo));
  try {
    await createTable(client, "bench");
    const store = new DynamoConversationStore(client, "bench");
    const counter = countReadBytes(client);
    const tenants = new StaticTenantDirectory([{ id: "t", key_hashes: [] }]);
    const results: Record<string, unknown>[] = [];
    for (const [label, window] of [
      ["no_fire", 100_000_000],
      ["fire", 40_000],
    ] as const) {
      const settings = { config: { enabled: true, min_turns: 5 } };
      const service = new ConversationService({ store, queue: new RecordingQueue(), settings });
      for (const atTurn of [10, 200]) {
        const samples: number[] = [];
        const bytes: number[] = [];
        const conversations = atTurn === 10 ? 15 : 4;
        for (let c = 0; c < conversations; c++) {
          const id = `${label}-${atTurn}-${c}`;
          for (let t = 0; t <= atTurn; t++) {
            await service.appendTurn({ id: "t" }, id, {
              turn: t,
              events: turnOfSize(t, 25_000, c),
              model: { context_window: window },
            });
          }
          counter.bytes = 0;
          counter.requests = 0;
          const start = performance.now();
          const outcome = await evaluateTurn(
            { store, tenants, settings },
            { tenant: "t", conversation: id, turn: atTurn },
          );
          samples.push(performance.now() - start);
          bytes.push(counter.bytes);
          const expected = label === "fire" ? "fired" : "skipped";
          if (outcome.outcome !== expected)
            throw new Error(`expected ${expected} at turn ${atTurn}, got ${outcome.outcome}`);
        }
        results.push({
          bench: `service.evaluation_${label}`,
          turn: atTurn,
          turn_bytes: 25_000,
          samples: samples.length,
          median_ms: round(percentile(samples, 50)),
          max_ms: round(Math.max(...samples)),
          bytes_read_median: percentile(bytes, 50),
        });
      }
    }
    return results;
  } finally {
    client.destroy();
    await dynamo.stop();
  }
}

export async function benchService(): Promise<Record<string, unknown>[]> {
  return [...(await benchWebhook()), ...(await benchEvaluation())];
}
