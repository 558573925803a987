/**
 * A notification publisher that keeps what it is given, in order, and sends
 * nothing anywhere: the memory adapter of the port, for tests.
 */
import type { Notification, NotificationPublisher } from "../ports.ts";

export class RecordingPublisher implements NotificationPublisher {
  /** Every notification published, in order. */
  readonly published: Notification[] = [];

  async publish(notifications: readonly Notification[]): Promise<void> {
    this.published.push(...notifications);
  }
}
