/**
 * The contract of {@link SummaryBudgets} (functions/ports.ts) against the
 * in-memory fake and DynamoDB Local (never mocks): counts per tenant and day,
 * concurrent adds that lose nothing; then the item on the table and its TTL.
 */
import { randomUUID } from "node:crypto";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import type { SummaryBudgets } from "../../functions/ports.ts";
import { budgetKey, DynamoSummaryBudgets } from "../../functions/store/summary-budgets-dynamodb.ts";
import { MemorySummaryBudgets } from "../../functions/store/summary-budgets-memory.ts";
import { TTL_ATTRIBUTE } from "../../infra/stack.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

/** A day past the wall clock: DynamoDB Local's TTL deletes by the wall clock. */
const EXPIRES = Math.floor(Date.now() / 1000) + 2 * 86_400;

function summaryBudgetsContract(name: string, make: () => Promise<SummaryBudgets>) {
  describe(`SummaryBudgets contract: ${name}`, () => {
    const tenant = () => `tenant-${randomUUID()}`;

    it("counts 0 before any add, then the running total per tenant and day", async () => {
      const budgets = await make();
      const [t, u] = [tenant(), tenant()];
      expect(await budgets.used(t, "2026-12-01")).toBe(0);
      expect(await budgets.add(t, "2026-12-01", 500, EXPIRES)).toBe(500);
      expect(await budgets.add(t, "2026-12-01", 250, EXPIRES)).toBe(750);
      expect(await budgets.used(t, "2026-12-01")).toBe(750);
      expect(await budgets.used(u, "2026-12-01")).toBe(0);
      expect(await budgets.add(t, "2026-12-02", 1, EXPIRES)).toBe(1);
      expect(await budgets.used(t, "2026-12-02")).toBe(1);
    });

    it("loses no count of concurrent adds", async () => {
      const budgets = await make();
      const t = tenant();
      await Promise.all(
        Array.from({ length: 20 }, () => budgets.add(t, "2026-12-01", 100, EXPIRES)),
      );
      expect(await budgets.used(t, "2026-12-01")).toBe(2_000);
    });
  });
}

summaryBudgetsContract("MemorySummaryBudgets", async () => new MemorySummaryBudgets());

const client = localClient();
afterAll(() => client.destroy());
let table: Promise<string> | undefined;
const sharedTable = () => {
  table ??= freshTable(client, "budgets");
  return table;
};

summaryBudgetsContract(
  "DynamoSummaryBudgets on DynamoDB Local",
  async () => new DynamoSummaryBudgets(client, await sharedTable()),
);

describe("DynamoSummaryBudgets items", () => {
  it("keeps one item per tenant and day, expiring through the table's TTL attribute", async () => {
    const budgets = new DynamoSummaryBudgets(client, await sharedTable());
    const t = `tenant-${randomUUID()}`;
    await budgets.add(t, "2026-12-01", 42, EXPIRES);
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: await sharedTable(),
        Key: budgetKey(t, "2026-12-01"),
        ConsistentRead: true,
      }),
    );
    expect(Item).toEqual({
      pk: { S: `BUDGET#${t}` },
      sk: { S: "DAY#2026-12-01" },
      tokens: { N: "42" },
      [TTL_ATTRIBUTE]: { N: String(EXPIRES) },
    });
  });
});
