/**
 * Notifications within EventBridge's 256 KB (issue 25): a body that would
 * exceed the budget carries references (positions, ranges, `truncated: true`)
 * instead of summary texts. Sizes are computed here as AWS documents a
 * PutEvents entry (14 bytes of `Time`, the UTF-8 bytes of `Source`,
 * `DetailType` and `Detail`), independently of size.ts.
 */
import { describe, expect, it } from "vitest";
import type { Compaction } from "../../core/events.ts";
import type { Notification } from "../ports.ts";
import { firingNotifications, resetNotifications } from "./events.ts";

const ref = { tenant: "alice", conversation: "c1" };

/** What AWS counts for the entry of `notification` (source `autocompact`, Time counted). */
const awsEntryBytes = (notification: Notification) =>
  14 +
  Buffer.byteLength("autocompact") +
  Buffer.byteLength(notification.body.type) +
  Buffer.byteLength(JSON.stringify(notification));

const second = (n: number) =>
  `2026-11-29T12:${String(Math.floor(n / 60)).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}.000000Z`;

/** Band `i` of a conversation: turns 2i..2i+1, a 4,000-character summary. */
const summaryBand = (i: number, chars = 4_000): Compaction & { position: number } => ({
  type: "compaction",
  timestamp: second(i),
  from_turn: 2 * i,
  to_turn: 2 * i + 1,
  source: "auto",
  summary: { summary: "é".repeat(chars / 2) + "s".repeat(chars / 2) },
  trigger: {
    turn: 2 * i + 3,
    estimated_tokens: 160_000,
    threshold: 150_000,
    context_window: 200_000,
    estimated_tokens_after: 120_000,
  },
  position: i + 1,
});

describe("a reset's notification", () => {
  it("of 70 summary bands fits in 262,144 bytes as references with truncated: true", () => {
    const removed = Array.from({ length: 70 }, (_, i) => summaryBand(i));
    // The fixture is the audit's case: the bands alone are over the limit.
    expect(Buffer.byteLength(JSON.stringify(removed))).toBeGreaterThan(262_144);

    const [notification, ...more] = resetNotifications(ref, removed, Date.UTC(2026, 10, 29, 13));
    expect(more).toEqual([]);
    if (!notification) throw new Error("no notification");
    expect(awsEntryBytes(notification)).toBeLessThanOrEqual(262_144);
    const data = notification.body.data as unknown as {
      truncated: boolean;
      removed_count: number;
      removed: Record<string, unknown>[];
    };
    expect(data.truncated).toBe(true);
    expect(data.removed_count).toBe(70);
    expect(data.removed).toHaveLength(70);
    expect(data.removed[69]).toEqual({
      type: "compaction",
      position: 70,
      timestamp: "2026-11-29T12:01:09.000000Z",
      from_turn: 138,
      to_turn: 139,
      source: "auto",
      summary_chars: 4_000,
      trigger: {
        turn: 141,
        estimated_tokens: 160_000,
        threshold: 150_000,
        context_window: 200_000,
        estimated_tokens_after: 120_000,
      },
    });
    expect(JSON.stringify(notification)).not.toContain("ssss");
  });

  it("keeps the bands whole when they fit, under the same webhook-id as their references", () => {
    const few = [summaryBand(0), summaryBand(1)];
    const [whole] = resetNotifications(ref, few, 0);
    expect(whole?.body.data).toEqual({ conversation: "c1", removed: few });
    const big = [summaryBand(0, 200_000), summaryBand(1, 200_000)];
    const [truncated] = resetNotifications(ref, big, 0);
    expect(truncated?.body.data.truncated).toBe(true);
    // The id digests the removed bands' timestamps only: a retry of either form is the same message.
    expect(truncated?.id).toBe(whole?.id);
  });

  it("of 10,000 bands names as many as fit, in order, and how many there were", () => {
    const removed = Array.from({ length: 10_000 }, (_, i) => summaryBand(i, 2));
    const [notification] = resetNotifications(ref, removed, 0);
    if (!notification) throw new Error("no notification");
    expect(awsEntryBytes(notification)).toBeLessThanOrEqual(262_144);
    const data = notification.body.data as unknown as {
      removed_count: number;
      removed: { position: number; from_turn: number; to_turn: number }[];
    };
    expect(data.removed_count).toBe(10_000);
    expect(data.removed.length).toBeGreaterThan(1_000);
    expect(data.removed.length).toBeLessThan(10_000);
    expect(data.removed.map((band) => band.position)).toEqual(
      Array.from({ length: data.removed.length }, (_, i) => i + 1),
    );
    expect(data.removed[0]).toEqual({
      type: "compaction",
      position: 1,
      timestamp: "2026-11-29T12:00:00.000000Z",
      from_turn: 0,
      to_turn: 1,
      source: "auto",
    });
  });
});

describe("a firing's notifications", () => {
  it("carry a band too big for the limit as a reference, both types alike", () => {
    const { position: _, ...band } = summaryBand(3, 300_000);
    band.trigger = {
      ...(band.trigger as NonNullable<Compaction["trigger"]>),
      estimated_tokens_after: 155_000,
    };
    const notifications = firingNotifications(ref, "AUTO#000000009", band);
    expect(notifications.map((n) => n.body.type)).toEqual([
      "compaction.fired",
      "compaction.still_over_threshold",
    ]);
    for (const notification of notifications) {
      expect(awsEntryBytes(notification)).toBeLessThanOrEqual(262_144);
      expect(notification.body.data).toEqual({
        conversation: "c1",
        truncated: true,
        band: {
          type: "compaction",
          timestamp: "2026-11-29T12:00:03.000000Z",
          from_turn: 6,
          to_turn: 7,
          source: "auto",
          summary_chars: 300_000,
          trigger: {
            turn: 9,
            estimated_tokens: 160_000,
            threshold: 150_000,
            context_window: 200_000,
            estimated_tokens_after: 155_000,
          },
        },
      });
    }
  });
});
