/**
 * The table of the DynamoDB stores, created from code: for DynamoDB Local
 * (`npm start`, the tests, the bench) and `autocompact tenant` against a
 * local endpoint. In AWS the CDK stack (infra/stack.ts) declares the table;
 * nothing in the functions creates or describes tables there.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { tableDefinition } from "./table-definition.ts";

/** The list index as CreateTable and UpdateTable take it. */
function listIndexInput(): GlobalSecondaryIndex {
  const { name, partitionKey, sortKey, nonKeyAttributes } = tableDefinition.listIndex;
  return {
    IndexName: name,
    KeySchema: [
      { AttributeName: partitionKey.name, KeyType: "HASH" },
      { AttributeName: sortKey.name, KeyType: "RANGE" },
    ],
    Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...nonKeyAttributes] },
  };
}

/** The attribute definitions of the list index's keys. */
function listIndexAttributes() {
  const { partitionKey, sortKey } = tableDefinition.listIndex;
  return [
    { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
    { AttributeName: sortKey.name, AttributeType: sortKey.type },
  ];
}

/** The CreateTable input for a store table (on-demand billing, `pk`/`sk` strings). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey: pk, sortKey: sk, billingMode } = tableDefinition;
  return {
    TableName: tableName,
    BillingMode: billingMode,
    KeySchema: [
      { AttributeName: pk.name, KeyType: "HASH" },
      { AttributeName: sk.name, KeyType: "RANGE" },
    ],
    AttributeDefinitions: [
      { AttributeName: pk.name, AttributeType: pk.type },
      { AttributeName: sk.name, AttributeType: sk.type },
      ...listIndexAttributes(),
    ],
    GlobalSecondaryIndexes: [listIndexInput()],
  };
}

/**
 * Creates the table (or finds it already there) and waits, with the SDK's
 * `waitUntilTableExists`, until it is ACTIVE; then enables TTL on
 * {@link tableDefinition}'s attribute unless it is already (a table made
 * before TTL was used gets it too), and adds the list index to a table made
 * before it. Table names need 3 to 255 characters of
 * `[A-Za-z0-9_.-]`.
 */
export async function createTable(
  client: DynamoDBClient,
  tableName: string,
  { timeoutMs = 120_000 }: { timeoutMs?: number } = {},
): Promise<{ created: boolean }> {
  // Checked here so a bad name fails with a message that says what to fix,
  // not with DynamoDB's ValidationException.
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new RangeError(
      `DynamoDB table name ${JSON.stringify(tableName)} must be 3 to 255 characters of A-Z a-z 0-9 _ . -`,
    );
  }
  let created = true;
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    created = false;
  }
  // The waiter checks at once (DynamoDB Local's tables are ACTIVE on
  // creation), then backs off from 1 s: its default 20 s first delay is
  // meant for tables in AWS, which take seconds to create.
  await waitUntilTableExists(
    { client, minDelay: 1, maxDelay: 5, maxWaitTime: Math.max(2, timeoutMs / 1_000) },
    { TableName: tableName },
  );
  await enableTimeToLive(client, tableName);
  if (!created) await addListIndex(client, tableName, timeoutMs);
  return { created };
}

/** Adds the list index to a table that lacks it, and waits until it is ACTIVE. */
async function addListIndex(client: DynamoDBClient, tableName: string, timeoutMs: number) {
  const name = tableDefinition.listIndex.name;
  const status = async () => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    return Table?.GlobalSecondaryIndexes?.find((index) => index.IndexName === name)?.IndexStatus;
  };
  if ((await status()) === undefined) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: listIndexAttributes(),
        GlobalSecondaryIndexUpdates: [{ Create: listIndexInput() }],
      }),
    );
  }
  for (const started = Date.now(); (await status()) !== "ACTIVE"; ) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `the list index ${name} of table ${tableName} is not ACTIVE after ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Enables TTL on {@link tableDefinition}'s attribute (UpdateTimeToLive refuses to enable it twice). */
async function enableTimeToLive(client: DynamoDBClient, tableName: string): Promise<void> {
  const AttributeName = tableDefinition.timeToLiveAttribute;
  const { TimeToLiveDescription: ttl } = await client.send(
    new DescribeTimeToLiveCommand({ TableName: tableName }),
  );
  if (ttl?.AttributeName === AttributeName && ttl.TimeToLiveStatus !== "DISABLED") return;
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName, Enabled: true },
    }),
  );
}
