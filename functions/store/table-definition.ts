/**
 * The store table's description as plain data, free of any AWS library so
 * that the CDK app may import it too: dynamodb-table.ts creates the local
 * table from it, infra/stack.ts declares the deployed one from it.
 */

/** The key schema, billing, TTL attribute and list index of a store table. */
export const tableDefinition = {
  partitionKey: { name: "pk", type: "S" },
  sortKey: { name: "sk", type: "S" },
  billingMode: "PAY_PER_REQUEST",
  /**
   * The TTL attribute (epoch seconds; infra/stack.ts `TTL_ATTRIBUTE`): set on
   * the event chunks of a turn until it commits (dynamodb-append.ts), so a crashed
   * writer's chunks expire.
   */
  timeToLiveAttribute: "expires_at",
  /**
   * The index of a tenant's conversations by last activity (GET
   * /v1/conversations): HEAD items carry `list_pk` (the tenant, escaped as
   * in partition keys) and `active_at` (epoch ms of the latest turn,
   * compaction change or config), and it projects only what the list shows.
   * Heads written before it existed carry neither until their next write.
   */
  listIndex: {
    name: "by-tenant-activity",
    partitionKey: { name: "list_pk", type: "S" },
    sortKey: { name: "active_at", type: "N" },
    nonKeyAttributes: [
      "turn_count",
      "projected_chars",
      "model",
      "bands",
      "last_fired_at",
      "deleting",
    ],
  },
} as const;
