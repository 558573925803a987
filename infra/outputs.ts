/**
 * The stack's outputs: what `autocompact` commands and operators read of a
 * deployment (docs/deploy.md, "Outputs"), by the names they look up.
 */
import { CfnOutput } from "aws-cdk-lib";
import type { AutocompactStack } from "./stack.ts";

/** Adds the outputs of `stack` (once, after everything they name exists). */
export function addOutputs(stack: AutocompactStack): void {
  const output = (id: string, value: string, description?: string) =>
    new CfnOutput(stack, id, { value, ...(description ? { description } : {}) });
  // No trailing slash: requests go to `${ApiUrl}/v1/…`.
  output("ApiUrl", stack.httpApi.apiEndpoint, "Base URL of the HTTP API");
  output(
    "TableName",
    stack.table.tableName,
    "The table of conversations, tenants and API keys (for `autocompact tenant create --table`)",
  );
  output(
    "WebhookSecretsKeyArn",
    stack.secretsKey.keyArn,
    "The KMS key sealing webhook secrets (`autocompact tenant` finds it as alias/autocompact/<TableName>; needs kms:GenerateDataKey and kms:Decrypt)",
  );
  output("QueueUrl", stack.queue.queueUrl);
  // `autocompact dlq`: list reads the DLQ by URL, redrive moves from its ARN to the queue's.
  output("QueueArn", stack.queue.queueArn);
  output("DeadLetterQueueUrl", stack.deadLetterQueue.queueUrl);
  output("DeadLetterQueueArn", stack.deadLetterQueue.queueArn);
  output("CompactorLogGroupName", stack.logGroups.compactor.logGroupName);
  output(
    "EventBusName",
    stack.eventBus.eventBusName,
    "The bus notifications are put on (source autocompact); add rules of your own",
  );
  output("NotificationDeadLetterQueueUrl", stack.notificationDeadLetterQueue.queueUrl);
  // Timers that failed every receive: redriven to the timer queue, they fire (or defer) again.
  output("IdleTimerDeadLetterQueueUrl", stack.idleTimers.deadLetterQueue.queueUrl);
  output("DashboardName", stack.operations.dashboard.dashboardName);
}
