/** Wires the service, app and evaluator on the in-memory fakes for tests. */
import { type AppDeps, createApp } from "../../functions/api/app.ts";
import { type Limits, TenantLimiter } from "../../functions/api/limits.ts";
import { type EvaluateOptions, evaluateTurn } from "../../functions/compactor/evaluate-turn.ts";
import type { RetryPolicy } from "../../functions/conversations/log.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import type { ServiceSettings } from "../../functions/conversations/state.ts";
import { DryRunCache, SummaryBudget } from "../../functions/conversations/summary-budget.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { AWS_URL_POLICY } from "../../functions/notifications/url-safety.ts";
import type {
  Clock,
  ConversationStore,
  EvaluationMessage,
  IdleTimers,
  Summarizer,
  SummaryBudgets,
  TurnQueue,
  WebhookReceipts,
} from "../../functions/ports.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import {
  MemoryNotificationEndpoints,
  StaticTenantDirectory,
  type TenantRecord,
} from "../../functions/store/tenants-memory.ts";
import { MemoryWebhookReceipts } from "../../functions/store/webhook-receipts-memory.ts";
import { messageTurn } from "./builders.ts";

/** A queue that records messages for the test to deliver by hand. */
export class RecordingQueue implements TurnQueue {
  readonly messages: EvaluationMessage[] = [];
  async enqueue(message: EvaluationMessage): Promise<void> {
    this.messages.push(message);
  }
  take(): EvaluationMessage[] {
    return this.messages.splice(0);
  }
}

/** Idle timers recorded for the test to deliver by hand (or twice, or late). */
export class RecordingTimers implements IdleTimers {
  readonly timers: { message: EvaluationMessage; dueMillis: number }[] = [];
  async schedule(message: EvaluationMessage, dueMillis: number): Promise<void> {
    this.timers.push({ message, dueMillis });
  }
  take(): { message: EvaluationMessage; dueMillis: number }[] {
    return this.timers.splice(0);
  }
}

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public now = Date.UTC(2026, 10, 29, 12)) {}
  nowMillis(): number {
    return this.now;
  }
}

/** Notification endpoints in memory under the deployed URL rules: a test app's unless it names its own. */
export function memoryNotifications(): AppDeps["notifications"] {
  return { endpoints: new MemoryNotificationEndpoints(), policy: AWS_URL_POLICY };
}

export const ALICE_KEY = "ak_alice_0123456789";
export const BOB_KEY = "ak_bob_0123456789";

/** A test harness: store, queue, service, app and evaluator over the same state. */
export function harness(
  options: {
    store?: ConversationStore;
    settings?: ServiceSettings;
    summarizer?: Summarizer;
    tenants?: TenantRecord[];
    webhookReceipts?: WebhookReceipts;
    bodyLimitBytes?: number;
    retry?: RetryPolicy;
    onServerError?: AppDeps["onServerError"];
    /** Notification endpoints and URL rules, and where resets are published (issue 16). */
    notifications?: AppDeps["notifications"];
    notifier?: AppDeps["notifier"];
    /** The retries, log and metric of a reset's publishing (issue 25). */
    publishing?: AppDeps["publishing"];
    /** Replaces the service's pause between reads of a waiting request (default below). */
    sleep?: (ms: number) => Promise<void>;
    /** Per-tenant request limits on the harness clock (issue 25); none without them. */
    limits?: Limits;
    /** A summary budget of this many tokens a day, counted in `budgets` (issue 25). */
    summaryBudget?: { tokensPerDay: number; budgets: SummaryBudgets };
    /** Keep dry-run answers (issue 25). */
    dryRunCache?: boolean;
  } = {},
) {
  const store = options.store ?? new MemoryConversationStore();
  const queue = new RecordingQueue();
  const timers = new RecordingTimers();
  const clock = new ManualClock();
  const tenants = new StaticTenantDirectory(
    options.tenants ?? [
      { id: "alice", key_hashes: [hashApiKey(ALICE_KEY)] },
      { id: "bob", key_hashes: [hashApiKey(BOB_KEY)] },
    ],
  );
  const webhookReceipts = options.webhookReceipts ?? new MemoryWebhookReceipts();
  const service = new ConversationService({
    store,
    queue,
    clock,
    // A wait for an evaluation sleeps for real (so a test can deliver one
    // meanwhile) and moves the manual clock, so waits also run out.
    sleep:
      options.sleep ??
      (async (ms) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        clock.now += ms;
      }),
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.summaryBudget
      ? {
          summaryBudget: new SummaryBudget(
            options.summaryBudget.budgets,
            options.summaryBudget.tokensPerDay,
            clock,
          ),
        }
      : {}),
    ...(options.dryRunCache ? { dryRuns: new DryRunCache() } : {}),
  });
  const app = createApp({
    service,
    tenants,
    clock,
    webhookReceipts,
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.onServerError ? { onServerError: options.onServerError } : {}),
    notifications: options.notifications ?? memoryNotifications(),
    ...(options.notifier ? { notifier: options.notifier } : {}),
    ...(options.publishing ? { publishing: options.publishing } : {}),
    ...(options.limits ? { limiter: new TenantLimiter(clock, options.limits) } : {}),
  });
  const evaluatorDeps = {
    store,
    tenants,
    clock,
    timers,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
  };
  const evaluate = (message: EvaluationMessage, options?: EvaluateOptions) =>
    evaluateTurn(evaluatorDeps, message, options);
  const request = (
    method: string,
    path: string,
    body?: unknown,
    key = ALICE_KEY,
    headers: Record<string, string> = {},
  ) =>
    app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return { store, queue, timers, clock, tenants, webhookReceipts, service, app, evaluate, request };
}

/** Posts turns 0 to `n - 1` of `messageTurns` to `conversation`, failing the test on a refusal. */
export async function postMessageTurns(
  request: ReturnType<typeof harness>["request"],
  conversation: string,
  n: number,
): Promise<void> {
  for (let turn = 0; turn < n; turn++) {
    const posted = await request("POST", `/v1/conversations/${conversation}/turns`, {
      turn,
      events: messageTurn(turn),
    });
    if (!posted.ok) throw new Error(`turn ${turn}: ${posted.status} ${await posted.text()}`);
  }
}
