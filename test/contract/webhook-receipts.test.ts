/**
 * The contract of {@link WebhookReceipts} (functions/ports.ts) against the
 * in-memory fake and DynamoDB Local (never mocks); then what only the table
 * shows: the item, its TTL attribute, and an expired item TTL has not
 * deleted yet.
 */
import { randomUUID } from "node:crypto";
import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import type { WebhookReceipts } from "../../functions/ports.ts";
import { tableDefinition } from "../../functions/store/table-definition.ts";
import {
  DynamoWebhookReceipts,
  receiptKey,
} from "../../functions/store/webhook-receipts-dynamodb.ts";
import { MemoryWebhookReceipts } from "../../functions/store/webhook-receipts-memory.ts";
import { TTL_ATTRIBUTE } from "../../infra/stack.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

/**
 * A day ahead of the wall clock: DynamoDB Local's TTL (enabled on the table)
 * deletes items whose `expires_at` is past by the wall clock, at moments of
 * its own, so every expiry a test writes is in the wall clock's future.
 */
const NOW = Math.floor(Date.now() / 1000) + 86_400;
const A = "a".repeat(64);
const B = "b".repeat(64);

function webhookReceiptsContract(name: string, make: () => Promise<WebhookReceipts>) {
  describe(`WebhookReceipts contract: ${name}`, () => {
    const tenant = () => `tenant-${randomUUID()}`;

    it("finds a first delivery new, its redelivery the same, and another message different", async () => {
      const receipts = await make();
      const t = tenant();
      expect(await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW, NOW + 300)).toBe(
        "new",
      );
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW + 1, NOW + 301),
      ).toBe("same");
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: B }, NOW + 2, NOW + 302),
      ).toBe("different");
      // The refused one replaced nothing.
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW + 3, NOW + 303),
      ).toBe("same");
    });

    it("keeps ids per tenant, and escapes # and % so no two pairs share a receipt", async () => {
      const receipts = await make();
      const t = tenant();
      expect(await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW, NOW + 300)).toBe(
        "new",
      );
      expect(await receipts.remember({ tenant: t, id: "msg_2", digest: B }, NOW, NOW + 300)).toBe(
        "new",
      );
      expect(
        await receipts.remember({ tenant: `${t}-2`, id: "msg_1", digest: B }, NOW, NOW + 300),
      ).toBe("new");
      expect(
        await receipts.remember({ tenant: `${t}#x`, id: "y", digest: A }, NOW, NOW + 300),
      ).toBe("new");
      expect(await receipts.remember({ tenant: t, id: "x#y", digest: B }, NOW, NOW + 300)).toBe(
        "new",
      );
      expect(
        await receipts.remember({ tenant: `${t}%23x`, id: "y", digest: B }, NOW, NOW + 300),
      ).toBe("new");
    });

    it("forgets a receipt at its expiry: the id is new again, under the new message", async () => {
      const receipts = await make();
      const t = tenant();
      expect(await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW, NOW + 300)).toBe(
        "new",
      );
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: B }, NOW + 299, NOW + 599),
      ).toBe("different");
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: B }, NOW + 300, NOW + 600),
      ).toBe("new");
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: A }, NOW + 301, NOW + 601),
      ).toBe("different");
      expect(
        await receipts.remember({ tenant: t, id: "msg_1", digest: B }, NOW + 599, NOW + 899),
      ).toBe("same");
    });

    it("finds exactly one of concurrent first deliveries new", async () => {
      const receipts = await make();
      const t = tenant();
      const same = await Promise.all(
        Array.from({ length: 8 }, () =>
          receipts.remember({ tenant: t, id: "msg_same", digest: A }, NOW, NOW + 300),
        ),
      );
      expect(same.sort()).toEqual(["new", ...Array(7).fill("same")]);
      const digests = Array.from({ length: 8 }, (_, i) => String(i).repeat(64));
      const different = await Promise.all(
        digests.map((digest) =>
          receipts.remember({ tenant: t, id: "msg_different", digest }, NOW, NOW + 300),
        ),
      );
      expect(different.sort()).toEqual([...Array(7).fill("different"), "new"]);
    });
  });
}

webhookReceiptsContract("MemoryWebhookReceipts", async () => new MemoryWebhookReceipts());

const client = localClient();
afterAll(() => client.destroy());
let table: Promise<string> | undefined;
const sharedTable = () => {
  table ??= freshTable(client, "receipts");
  return table;
};

webhookReceiptsContract(
  "DynamoWebhookReceipts on DynamoDB Local",
  async () => new DynamoWebhookReceipts(client, await sharedTable()),
);

describe("DynamoWebhookReceipts items", () => {
  const read = async (tenant: string, id: string) =>
    (
      await client.send(
        new GetItemCommand({
          TableName: await sharedTable(),
          Key: receiptKey(tenant, id),
          ConsistentRead: true,
        }),
      )
    ).Item;

  it("stores one item per tenant and id, expiring through the table's TTL attribute", async () => {
    expect(tableDefinition.timeToLiveAttribute).toBe(TTL_ATTRIBUTE);
    const receipts = new DynamoWebhookReceipts(client, await sharedTable());
    const tenant = `tenant#${randomUUID()}`;
    await receipts.remember({ tenant, id: "msg%1", digest: A }, NOW, NOW + 300);
    expect(await read(tenant, "msg%1")).toEqual({
      pk: { S: `WEBHOOK#${tenant.replace("#", "%23")}#msg%251` },
      sk: { S: "WEBHOOK" },
      digest: { S: A },
      expires_at: { N: String(NOW + 300) },
    });
  });

  it("counts an expired item TTL has not deleted yet as absent, and replaces it", async () => {
    const receipts = new DynamoWebhookReceipts(client, await sharedTable());
    const tenant = `tenant-${randomUUID()}`;
    // What TTL leaves behind until it gets to it (up to days after the expiry;
    // in the past for the receipts, still ahead of the wall clock for DynamoDB Local).
    await client.send(
      new PutItemCommand({
        TableName: await sharedTable(),
        Item: {
          ...receiptKey(tenant, "msg_1"),
          digest: { S: A },
          expires_at: { N: String(NOW - 3600) },
        },
      }),
    );
    expect(await receipts.remember({ tenant, id: "msg_1", digest: B }, NOW, NOW + 300)).toBe("new");
    expect(await read(tenant, "msg_1")).toMatchObject({
      digest: { S: B },
      expires_at: { N: String(NOW + 300) },
    });
    expect(await receipts.remember({ tenant, id: "msg_1", digest: A }, NOW + 1, NOW + 301)).toBe(
      "different",
    );
  });
});
