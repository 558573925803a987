/**
 * What an operator watches (docs/architecture.md §10): the dashboard, the alarms and
 * the saved Logs Insights queries over the compactor's JSON log lines.
 *
 * The compactor's metrics are Powertools Metrics (EMF): namespace
 * `Autocompact`, every metric with the dimension `service` (the Metrics
 * instance's `serviceName`), `Skipped` with `service` + `reason` (a
 * `singleMetric()` inherits the default `service` dimension). `EvaluationLagMs`
 * (milliseconds from the turn's post, by the API's clock, to the evaluation
 * that decided on it, by the compactor's) is emitted for decided evaluations
 * only (fired or a trigger skip); its p99 has an alarm. Its log lines
 * are Powertools Logger JSON: the event name in `message`, extra keys
 * (`tenant`, `conversation`, `turn`, `reason`, …) at the top level, which Logs
 * Insights discovers as fields.
 */
import { Duration, Stack } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarmAction,
  type IMetric,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { type ILogGroup, QueryDefinition, QueryString } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { SKIP_REASONS } from "../core/auto-compaction.ts";
import { DELIVERY_SKIPS, METRICS_NAMESPACE, SERVICE_NAMES } from "../functions/observability.ts";
import type { AutocompactSettings } from "./config.ts";

export { METRICS_NAMESPACE, SERVICE_NAMES };

/** Every value of the `reason` dimension of `Skipped`. */
export const SKIP_METRIC_REASONS: readonly string[] = [...SKIP_REASONS, ...DELIVERY_SKIPS];

/** The compactor's log line fields of a firing (functions/compactor/handler.ts). */
const FIRING_FIELDS = [
  "@timestamp",
  "tenant",
  "conversation",
  "turn",
  "from_turn",
  "to_turn",
  "policy",
  "estimated_tokens",
  "estimated_tokens_after",
  "threshold",
  "context_window",
  "duration_ms",
];

/** The saved Logs Insights queries, by the name they are saved under (after the stack's name). */
export const LOGS_INSIGHTS_QUERIES = {
  // Logs Insights has no "now" in the query language: the time range (1 day)
  // is chosen when running it (console picker, or start-query --start-time).
  "firings in the last day": new QueryString({
    fields: FIRING_FIELDS,
    filterStatements: ['message = "auto_compaction.fired"'],
    sort: "@timestamp desc",
    limit: 10000,
  }),
  "firings by conversation": new QueryString({
    filterStatements: ['message = "auto_compaction.fired"'],
    statsStatements: [
      "count(*) as firings, max(turn) as last_turn, max(estimated_tokens) as max_estimated_tokens by tenant, conversation",
    ],
    sort: "firings desc",
    limit: 1000,
  }),
  "still over threshold": new QueryString({
    fields: FIRING_FIELDS.filter((field) => field !== "duration_ms"),
    filterStatements: ['message = "auto_compaction.still_over_threshold"'],
    sort: "@timestamp desc",
    limit: 10000,
  }),
  "skips by reason": new QueryString({
    filterStatements: ['message = "auto_compaction.skipped"'],
    statsStatements: ["count(*) as skips by reason"],
    sort: "skips desc",
  }),
  // Decided evaluations (fired, or skipped by the trigger) carry evaluation_lag_ms.
  "evaluation lag by conversation": new QueryString({
    filterStatements: ["ispresent(evaluation_lag_ms)"],
    statsStatements: [
      "count(*) as evaluations, pct(evaluation_lag_ms, 50) as p50_lag_ms, pct(evaluation_lag_ms, 99) as p99_lag_ms, max(evaluation_lag_ms) as max_lag_ms by tenant, conversation",
    ],
    sort: "p99_lag_ms desc",
    limit: 100,
  }),
} as const;

export interface OperationsProps {
  readonly settings: AutocompactSettings;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly apiFunction: IFunction;
  readonly compactorFunction: IFunction;
  readonly httpApi: HttpApi;
  readonly compactorLogGroup: ILogGroup;
  /** The notifications that failed every delivery attempt (docs/architecture.md §16). */
  readonly notificationDeadLetterQueue: Queue;
  readonly notifierFunction: IFunction;
  /** The idle timers' queue and DLQ (infra/idle-timers.ts). */
  readonly idleTimers: { readonly queue: Queue; readonly deadLetterQueue: Queue };
}

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);

/** The dashboard, the alarms and the saved queries of one deployment. */
export class Operations extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: {
    readonly deadLetterQueueNotEmpty: Alarm;
    readonly queueAge: Alarm;
    readonly evaluationLag: Alarm;
    readonly compactorErrors: Alarm;
    readonly compactorFailedRecords: Alarm;
    readonly apiErrors: Alarm;
    readonly api5xx: Alarm;
    readonly notificationsFailed: Alarm;
    readonly notificationsPublishFailed: Alarm;
    readonly idleTimersFailed: Alarm;
  };
  readonly queries: readonly QueryDefinition[];

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { settings, queue, deadLetterQueue, apiFunction, compactorFunction, httpApi } = props;
    const prefix = Stack.of(this).stackName;

    const compactorMetric = (
      metricName: string,
      statistic: string,
      label: string,
      dimensions: Record<string, string> = {},
    ) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAMES.compactor, ...dimensions },
        statistic,
        label,
        period: FIVE_MINUTES,
      });

    const fired = compactorMetric("Fired", "Sum", "firings");
    const skipped = SKIP_METRIC_REASONS.map((reason) =>
      compactorMetric("Skipped", "Sum", reason, { reason }),
    );
    const tokensRemoved = compactorMetric("TokensRemoved", "Sum", "tokens removed");
    const stillOver = compactorMetric("StillOverThreshold", "Sum", "still over threshold");
    const failedRecords = compactorMetric("Failed", "Sum", "failed records");
    const evaluationMs = ["p50", "p90", "p99", "Maximum"].map((statistic) =>
      compactorMetric("EvaluationMs", statistic, `evaluation ${statistic}`),
    );
    const evaluationLag = ["p50", "p99", "Maximum"].map((statistic) =>
      compactorMetric("EvaluationLagMs", statistic, `lag ${statistic}`),
    );
    const evaluationLagP99 = evaluationLag[1] as Metric;
    const queueAge = queue.metricApproximateAgeOfOldestMessage({
      statistic: "Maximum",
      period: ONE_MINUTE,
      label: "oldest message age (s)",
    });
    const messagesIn = (dlq: Queue, label: string) =>
      dlq.metricApproximateNumberOfMessagesVisible({
        statistic: "Maximum",
        period: ONE_MINUTE,
        label,
      });
    const dlqDepth = messagesIn(deadLetterQueue, "messages in the DLQ");
    const lambdaMetrics = (fn: IFunction, name: string) => ({
      errors: fn.metricErrors({ period: FIVE_MINUTES, statistic: "Sum", label: `${name} errors` }),
      throttles: fn.metricThrottles({
        period: FIVE_MINUTES,
        statistic: "Sum",
        label: `${name} throttles`,
      }),
      durations: ["p50", "p99"].map((statistic) =>
        fn.metricDuration({ period: FIVE_MINUTES, statistic, label: `${name} ${statistic}` }),
      ),
    });
    const notifierMetric = (metricName: string, label: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAMES.notifier },
        statistic: "Sum",
        label,
        period: FIVE_MINUTES,
      });
    const delivered = notifierMetric("NotificationsDelivered", "delivered");
    const deliveryFailures = notifierMetric("NotificationsFailed", "failed attempts");
    // Given-up publishes happen in the api (a reset's notification) and the compactor (a firing's).
    const publishFailed = new MathExpression({
      expression: "FILL(api, 0) + FILL(compactor, 0)",
      usingMetrics: {
        api: new Metric({
          namespace: METRICS_NAMESPACE,
          metricName: "NotificationsPublishFailed",
          dimensionsMap: { service: SERVICE_NAMES.api },
          statistic: "Sum",
          period: FIVE_MINUTES,
        }),
        compactor: compactorMetric("NotificationsPublishFailed", "Sum", "publish failed"),
      },
      label: "notifications not published",
      period: FIVE_MINUTES,
    });
    const notificationDlqDepth = messagesIn(
      props.notificationDeadLetterQueue,
      "notifications in the DLQ",
    );
    const timerDlqDepth = messagesIn(props.idleTimers.deadLetterQueue, "timers in the DLQ");
    // A timer waits out its DelaySeconds as a delayed message, then is visible until received.
    const timersPending = props.idleTimers.queue.metricApproximateNumberOfMessagesDelayed({
      statistic: "Maximum",
      period: ONE_MINUTE,
      label: "timers not due yet",
    });
    const timersDue = messagesIn(props.idleTimers.queue, "timers due, not received yet");
    const api = lambdaMetrics(apiFunction, "api");
    const compactor = lambdaMetrics(compactorFunction, "compactor");
    const notifier = lambdaMetrics(props.notifierFunction, "notifier");
    const api4xx = httpApi.metricClientError({
      period: FIVE_MINUTES,
      statistic: "Sum",
      label: "4xx",
    });
    const api5xx = httpApi.metricServerError({
      period: FIVE_MINUTES,
      statistic: "Sum",
      label: "5xx",
    });
    const apiCount = httpApi.metricCount({
      period: FIVE_MINUTES,
      statistic: "Sum",
      label: "requests",
    });
    const apiLatency = ["p50", "p99"].map((statistic) =>
      httpApi.metricLatency({ period: FIVE_MINUTES, statistic, label: `latency ${statistic}` }),
    );
    const integrationLatency = httpApi.metricIntegrationLatency({
      period: FIVE_MINUTES,
      statistic: "p99",
      label: "integration latency p99",
    });

    // --- alarms ---
    const actions: IAlarmAction[] = settings.alarms.topicArn
      ? [new SnsAction(Topic.fromTopicArn(this, "AlarmTopic", settings.alarms.topicArn))]
      : [];
    const alarm = (
      id: string,
      metric: IMetric,
      options: {
        threshold: number;
        comparison: ComparisonOperator;
        periods?: number;
        description: string;
      },
    ) => {
      const created = new Alarm(this, id, {
        alarmName: `${prefix}-${id}`,
        alarmDescription: options.description,
        metric,
        threshold: options.threshold,
        comparisonOperator: options.comparison,
        evaluationPeriods: options.periods ?? 1,
        datapointsToAlarm: options.periods ?? 1,
        // No data (an idle service, an inactive queue) is healthy.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      for (const action of actions) {
        created.addAlarmAction(action);
        created.addOkAction(action);
      }
      return created;
    };
    const GT = ComparisonOperator.GREATER_THAN_THRESHOLD;
    const GTE = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
    // A dead-letter queue holds what failed every attempt: one message is one too many.
    const notEmpty = (id: string, depth: IMetric, description: string) =>
      alarm(id, depth, { threshold: 0, comparison: GT, description });
    // A function's errors and failed records are faults: one raises the alarm.
    const anyFailure = (id: string, failures: IMetric, description: string, periods = 1) =>
      alarm(id, failures, { threshold: 1, comparison: GTE, periods, description });
    this.alarms = {
      deadLetterQueueNotEmpty: notEmpty(
        "DeadLetterQueueNotEmpty",
        dlqDepth,
        "An evaluation message failed 5 receives and is in the DLQ: its turn was never evaluated. Read the compactor's auto_compaction.failed log lines, fix, then redrive the DLQ.",
      ),
      queueAge: alarm("QueueAge", queueAge, {
        threshold: settings.alarms.queueAgeSeconds,
        comparison: GT,
        periods: 3,
        description: `The oldest evaluation message is older than ${settings.alarms.queueAgeSeconds} s for 3 minutes: records keep failing (see Failed) or the compactor cannot keep up (see throttles and max concurrency).`,
      }),
      evaluationLag: alarm("EvaluationLag", evaluationLagP99, {
        threshold: settings.alarms.evaluationLagSeconds * 1000,
        comparison: GT,
        periods: 2,
        description: `The p99 evaluation lag (a turn's post to the evaluation that decided on it, EvaluationLagMs) is over ${settings.alarms.evaluationLagSeconds} s for 10 minutes: reads with after_turn wait that long or answer evaluation-pending. See the queue's age, compactor throttles and max concurrency, and slow summaries (EvaluationMs).`,
      }),
      compactorErrors: anyFailure(
        "CompactorErrors",
        compactor.errors,
        "The compactor Lambda failed whole invocations (crash, timeout, or a cold start rejecting its environment). Record failures are counted by the Failed metric instead.",
      ),
      compactorFailedRecords: anyFailure(
        "CompactorFailedRecords",
        failedRecords,
        "Evaluation records have failed in each of the last 3 five-minute periods (store contention, summarizer errors, invalid messages). Failed records are retried and end in the DLQ after 5 receives.",
        3,
      ),
      apiErrors: anyFailure(
        "ApiErrors",
        api.errors,
        "The api Lambda failed invocations (crash, timeout, or a cold start rejecting its environment); clients got 5xx from API Gateway.",
      ),
      api5xx: alarm("Api5xx", api5xx, {
        threshold: 5,
        comparison: GTE,
        description:
          "The HTTP API answered 5 or more 5xx in 5 minutes (unexpected errors, summarizer failures on manual compactions, throttling or timeouts).",
      }),
      notificationsFailed: notEmpty(
        "NotificationDeadLetterQueueNotEmpty",
        notificationDlqDepth,
        "A notification failed every delivery attempt and is in the notification DLQ: a tenant's endpoint is down, answers non-2xx, or resolves to a refused address. Read the notifier's notification.failed log lines, then redrive the DLQ to the notification queue.",
      ),
      notificationsPublishFailed: anyFailure(
        "NotificationsPublishFailed",
        publishFailed,
        "Notifications were given up after every publish attempt to EventBridge (the api's reset notifications, the compactor's firing ones, whose records then fail and retry): the bus, its permissions or its quota. Read the notification.publish_failed log lines (tenant, conversation, ids).",
      ),
      idleTimersFailed: notEmpty(
        "IdleTimerDeadLetterQueueNotEmpty",
        timerDlqDepth,
        "An idle timer failed 5 receives and is in the timer DLQ: its conversation gets no idle band until its next turn is evaluated. Read the compactor's auto_compaction.failed log lines (they carry the turn), fix, then redrive the timer DLQ to the timer queue (a redriven timer fires, or does nothing if a newer turn decided).",
      ),
    };

    // --- dashboard ---
    const graph = (
      title: string,
      left: IMetric[],
      options: Partial<{ width: number; stacked: boolean; right: IMetric[] }> = {},
    ) =>
      new GraphWidget({
        title,
        left,
        ...(options.right ? { right: options.right } : {}),
        width: options.width ?? 6,
        height: 6,
        stacked: options.stacked ?? false,
      });
    this.dashboard = new Dashboard(this, "Dashboard", {
      dashboardName: prefix,
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${prefix}: automatic compaction\nFirings and skips come from the compactor's EMF metrics (namespace \`${METRICS_NAMESPACE}\`, service \`${SERVICE_NAMES.compactor}\`). Saved Logs Insights queries: \`${prefix}/…\`.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph("Firings", [fired]),
      graph("Skips by reason", skipped, { stacked: true }),
      graph("Tokens removed", [tokensRemoved]),
      graph("Still over threshold after firing", [stillOver]),
    );
    this.dashboard.addWidgets(
      graph("Evaluation latency (ms)", evaluationMs),
      graph("Failed records", [failedRecords]),
      graph("Queue: age of oldest message (s)", [queueAge]),
      graph("DLQ depth", [dlqDepth]),
    );
    this.dashboard.addWidgets(
      graph(
        "Lambda errors and throttles",
        [api.errors, compactor.errors, api.throttles, compactor.throttles],
        { width: 8 },
      ),
      graph("Lambda duration (ms)", [...api.durations, ...compactor.durations], { width: 8 }),
      graph("HTTP API: requests, 4xx, 5xx", [api4xx, api5xx], { width: 8, right: [apiCount] }),
    );
    this.dashboard.addWidgets(
      graph("HTTP API latency (ms)", [...apiLatency, integrationLatency], { width: 8 }),
      graph("Evaluation lag (ms): turn posted → decided", evaluationLag, { width: 8 }),
      new AlarmStatusWidget({
        title: "Alarms",
        alarms: Object.values(this.alarms),
        width: 8,
        height: 6,
      }),
    );
    this.dashboard.addWidgets(
      graph("Notifications: delivered, failed attempts", [delivered, deliveryFailures], {
        width: 8,
      }),
      graph("Notification DLQ depth", [notificationDlqDepth], { width: 8 }),
      graph("Notifier errors and duration (ms)", [notifier.errors, notifier.throttles], {
        width: 8,
        right: notifier.durations,
      }),
    );
    this.dashboard.addWidgets(
      graph("Idle timers: not due, due", [timersPending, timersDue], { width: 12 }),
      graph("Idle timer DLQ depth", [timerDlqDepth], { width: 12 }),
    );
    this.dashboard.addWidgets(
      new LogQueryWidget({
        title: "Latest firings",
        logGroupNames: [props.compactorLogGroup.logGroupName],
        queryString: new QueryString({
          fields: FIRING_FIELDS,
          filterStatements: ['message = "auto_compaction.fired"'],
          sort: "@timestamp desc",
          limit: 50,
        }).toString(),
        view: LogQueryVisualizationType.TABLE,
        width: 24,
        height: 8,
      }),
    );

    // --- saved Logs Insights queries (a "folder" named after the stack) ---
    this.queries = Object.entries(LOGS_INSIGHTS_QUERIES).map(
      ([name, queryString]) =>
        new QueryDefinition(
          this,
          `Query${name.replace(/(?:^|\s+)(\w)/g, (_, c: string) => c.toUpperCase())}`,
          {
            queryDefinitionName: `${prefix}/${name}`,
            queryString,
            logGroups: [props.compactorLogGroup],
          },
        ),
    );
  }
}
