/**
 * `autocompact dlq list|redrive|status`: the evaluation queue's dead letters.
 * On AWS (--dlq-url …): the SQS DLQ, each dead letter beside the last
 * failure the compactor recorded on its conversation (read from the table),
 * and a message move task back to the queue. Locally (the default): the
 * running `npm start`'s admin routes (functions/local/admin.ts).
 */
import { InvalidInputError } from "../../core/errors.ts";
import { awsClientSettings } from "../aws.ts";
import { LOCAL_DEV_KEY, serviceClient, TIMEOUT_OPTION } from "../client.ts";
import { defineCommand, EXIT, type Io, UsageError, write } from "../command.ts";

const OPTIONS = {
  url: { type: "string" },
  key: { type: "string" },
  "dlq-url": { type: "string" },
  "dlq-arn": { type: "string" },
  "queue-arn": { type: "string" },
  table: { type: "string" },
  region: { type: "string" },
  endpoint: { type: "string" },
  limit: { type: "string" },
  ...TIMEOUT_OPTION,
} as const;

const ACTIONS = ["list", "redrive", "status"] as const;
type Action = (typeof ACTIONS)[number];

const USAGE = `Usage: autocompact dlq list    [--url URL] [--key KEY]
       autocompact dlq redrive [--url URL] [--key KEY]
       autocompact dlq list    --dlq-url URL --table TABLE [--limit N] [--region R]
       autocompact dlq redrive --dlq-arn ARN --queue-arn ARN [--region R]
       autocompact dlq status  --dlq-arn ARN [--region R]

The evaluation messages that failed 5 receives. list prints one JSON line per
dead letter: {"message_id","receive_count","sent_at","tenant","conversation",
"turn","last_failure"}, where last_failure is the conversation's last failed
evaluation as the compactor recorded it ({"turn","error","message","at"}, or
null); a body that is not an evaluation message is printed with "invalid" and
"body" instead. redrive moves them all back to the evaluation queue, where they
are evaluated again (fix the cause first).

Locally (the default) it asks the running service (npm start): its admin
routes take the dev key. redrive answers {"moved":N} once they are queued.

On AWS, with the stack's outputs: list receives from the DLQ with a 10 s
visibility timeout and releases every message again as soon as it has listed
them (at most --limit, default 100); redrive starts an SQS message move task
and prints {"task_handle"}; status prints the last move task
({"status","moved","to_move","failure"}) or null.

  --url URL         the local service (default $AUTOCOMPACT_URL, else http://127.0.0.1:8787)
  --key KEY         its dev key (default $AUTOCOMPACT_DEV_KEY, else "local-dev-key")
  --timeout S       how long one request to it may take (default 30 seconds)
  --dlq-url URL     the DLQ (output DeadLetterQueueUrl)
  --dlq-arn ARN     the DLQ (output DeadLetterQueueArn)
  --queue-arn ARN   the evaluation queue (output QueueArn)
  --table TABLE     the table (output TableName), for the recorded failures
  --region R        AWS region (default from the environment)
  --endpoint URL    a DynamoDB endpoint (e.g. DynamoDB Local)
  --limit N         list: at most N dead letters (AWS; default 100)

Credentials come from the default AWS chain: sqs:ReceiveMessage and
sqs:ChangeMessageVisibility on the DLQ and dynamodb:GetItem on the table for
list; sqs:StartMessageMoveTask (with the DLQ's sqs:ReceiveMessage,
sqs:DeleteMessage, sqs:GetQueueAttributes and the queue's sqs:SendMessage)
for redrive; sqs:ListMessageMoveTasks for status (docs/deploy.md).`;

type Values = {
  [K in keyof typeof OPTIONS]?: string | undefined;
};

const line = (io: Io, value: unknown) => write(io.stdout, `${JSON.stringify(value)}\n`);

async function local(action: Action, values: Values, io: Io): Promise<number> {
  if (action === "status") {
    throw new UsageError(
      "status is for a move task on AWS: a local redrive is done when it answers",
    );
  }
  const key = values.key ?? io.env.AUTOCOMPACT_DEV_KEY ?? LOCAL_DEV_KEY;
  const client = serviceClient({ url: values.url, key, timeout: values.timeout }, io);
  if (action === "list") {
    const { dead_letters } = await client.deadLetters();
    for (const entry of dead_letters) await line(io, entry);
  } else {
    await line(io, await client.redriveDeadLetters());
  }
  return EXIT.ok;
}

const required = (value: string | undefined, flag: string, output: string): string => {
  if (!value) throw new UsageError(`give ${flag} (the stack output ${output})`);
  return value;
};

async function aws(action: Action, values: Values, io: Io): Promise<number> {
  const { SQSClient } = await import("@aws-sdk/client-sqs");
  const { SqsDeadLetters } = await import("../../functions/queue/sqs-dead-letters.ts");
  const region = awsClientSettings(values.region, io.env);
  const sqs = new SQSClient(region);
  const queues = {
    deadLetterQueueUrl: values["dlq-url"] ?? "",
    deadLetterQueueArn: values["dlq-arn"] ?? "",
    sourceQueueArn: values["queue-arn"] ?? "",
  };
  try {
    if (action === "redrive") {
      required(values["dlq-arn"], "--dlq-arn", "DeadLetterQueueArn");
      required(values["queue-arn"], "--queue-arn", "QueueArn");
      await line(io, { task_handle: await new SqsDeadLetters(sqs, queues).redrive() });
      return EXIT.ok;
    }
    if (action === "status") {
      required(values["dlq-arn"], "--dlq-arn", "DeadLetterQueueArn");
      await line(io, (await new SqsDeadLetters(sqs, queues).lastMoveTask()) ?? null);
      return EXIT.ok;
    }
    required(values["dlq-url"], "--dlq-url", "DeadLetterQueueUrl");
    const table = required(values.table, "--table", "TableName");
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new UsageError(`--limit must be a whole number of at least 1 (got ${values.limit})`);
    }
    const { DynamoDBClient } = await import("@aws-sdk/client-dynamodb");
    const { dynamoClientConfig } = await import("../../functions/store/dynamodb-client.ts");
    const { getFailure } = await import("../../functions/store/dynamodb-failures.ts");
    const { describeDeadLetter } = await import("../../functions/queue/dead-letters.ts");
    const dynamo = new DynamoDBClient(
      dynamoClientConfig({ ...region, ...(values.endpoint ? { endpoint: values.endpoint } : {}) }),
    );
    try {
      for (const dead of await new SqsDeadLetters(sqs, queues).list(limit)) {
        await line(io, await describeDeadLetter(dead, (ref) => getFailure(dynamo, table, ref)));
      }
    } finally {
      dynamo.destroy();
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError || error instanceof InvalidInputError) throw error;
    throw new InvalidInputError(`dlq ${action}: ${(error as Error).message}`, { cause: error });
  } finally {
    sqs.destroy();
  }
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const action = positionals[0] as Action | undefined;
  if (action === undefined || !ACTIONS.includes(action) || positionals.length > 1) {
    throw new UsageError(`say \`dlq ${ACTIONS.join("|")}\``);
  }
  const onAws = ["dlq-url", "dlq-arn", "queue-arn", "table"].some(
    (flag) => values[flag as keyof Values] !== undefined,
  );
  if (onAws && (values.url !== undefined || values.key !== undefined)) {
    throw new UsageError("--url and --key are for the local service; the DLQ flags are for AWS");
  }
  return onAws ? aws(action, values, io) : local(action, values, io);
});
