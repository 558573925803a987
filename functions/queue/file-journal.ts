/**
 * A {@link QueueJournal} in one append-only file (docs/architecture.md §11):
 * a snapshot line (`{"version":2,"messages":[…]}`), then one JSON line per
 * change. Changes are appended, several callers' at once in one write and one
 * `fdatasync` (a group commit), so a burst costs a few bytes per message, not
 * a rewrite of the whole queue each time.
 *
 * - Compaction: once the file would grow past `compactAtBytes` (1 MiB) and
 *   twice its last snapshot, the state is written as a new snapshot instead
 *   (a temporary file beside it, flushed, renamed over the journal: the
 *   previous or the new file, never a mix), so the file stays bounded by the
 *   pending messages and appends cost O(1) amortized.
 * - Crash recovery: loading replays the changes over the snapshot. A last
 *   line without its newline is a write a crash cut short; it was never
 *   acknowledged, so it is dropped. Any other line that does not parse is
 *   corruption, refused with the file's path and line.
 * - An instance's first write, and any write after a failed one, is a
 *   snapshot: a torn tail is cut, a version 1 journal (one snapshot, as
 *   written before) is carried over, and a half-written append never gets
 *   another line joined to it.
 */
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import * as z from "zod";
import { issueLines } from "../../core/issues.ts";
import { CorruptDataError, QueueError } from "../errors.ts";

/** A message as the journal keeps it. */
const QueuedMessageSchema = z
  .object({
    id: z.string().min(1),
    body: z.string(),
    group_id: z.string().min(1),
    deduplication_id: z.string().min(1),
    /** Order of sending, across groups. */
    sequence: z.number().int().nonnegative(),
    sent_at: z.number(),
    receive_count: z.number().int().nonnegative(),
    first_received_at: z.number().optional(),
    /** A delayed message not yet received: hidden until then. */
    visible_at: z.number().optional(),
    /** Set once the message is on the dead-letter list. */
    dead_lettered_at: z.number().optional(),
  })
  .readonly();

/** A message as the journal keeps it (the in-process queue's unit of state). */
export type QueuedMessage = z.infer<typeof QueuedMessageSchema>;

/** A message moved to the dead-letter list after `maxReceiveCount` receives. */
export type DeadLetter = QueuedMessage & { readonly dead_lettered_at: number };

const id = z.string().min(1);

/** One change of the queue, one line of the journal. */
const JournalChangeSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("send"), message: QueuedMessageSchema }),
  z.object({
    op: z.literal("receive"),
    id,
    receive_count: z.number().int().positive(),
    first_received_at: z.number(),
  }),
  /** Deleted when done, or taken off the dead-letter list by a redrive. */
  z.object({ op: z.literal("delete"), id }),
  z.object({ op: z.literal("dead_letter"), id, dead_lettered_at: z.number() }),
]);

/** One change of the queue's state, as {@link QueueJournal.append} takes it. */
export type JournalChange = z.infer<typeof JournalChangeSchema>;

/** Where the in-process queue keeps its messages across restarts. */
export interface QueueJournal {
  /**
   * Every message the journal holds (pending and dead-lettered), with every
   * change appended before it; none when nothing was saved yet. Call it
   * before {@link append}.
   */
  load(): Promise<QueuedMessage[]>;
  /** Appends changes; resolves once they are on disk, the calls settling in call order. */
  append(changes: readonly JournalChange[]): Promise<void>;
}

const Snapshot = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  messages: z.array(QueuedMessageSchema),
});

/** The file may grow to this before a compaction (unless twice the last snapshot is more). */
const COMPACT_AT_BYTES = 1024 * 1024;

let tmpCounter = 0;

interface Pending {
  readonly text: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class FileQueueJournal implements QueueJournal {
  readonly #path: string;
  readonly #compactAtBytes: number;
  /** The state the file holds once every pending append is written; undefined before `load`. */
  #state: Map<string, QueuedMessage> | undefined;
  #pending: Pending[] = [];
  /** A write loop is running (it takes every append made meanwhile). */
  #writing = false;
  /** The next write replaces the file with a snapshot (the first one, and after a failure). */
  #snapshotNext = true;
  #fileBytes = 0;
  #snapshotBytes = 0;

  constructor(path: string, options: { readonly compactAtBytes?: number } = {}) {
    this.#path = path;
    this.#compactAtBytes = options.compactAtBytes ?? COMPACT_AT_BYTES;
  }

  get path(): string {
    return this.#path;
  }

  async load(): Promise<QueuedMessage[]> {
    let text: string;
    try {
      text = await readFile(this.#path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      text = "";
    }
    const state = text === "" ? new Map<string, QueuedMessage>() : this.#replay(text);
    this.#state ??= state;
    return [...state.values()];
  }

  append(changes: readonly JournalChange[]): Promise<void> {
    const state = this.#state;
    if (!state) return Promise.reject(new QueueError("load the queue journal before appending"));
    for (const change of changes) apply(state, change);
    const text = changes.map((change) => `${JSON.stringify(change)}\n`).join("");
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ text, resolve, reject });
      if (this.#writing) return;
      this.#writing = true;
      void this.#write(state);
    });
  }

  /** Writes what is pending, one group commit at a time, until nothing is. */
  async #write(state: Map<string, QueuedMessage>): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0);
      try {
        const text = batch.map((pending) => pending.text).join("");
        const bytes = Buffer.byteLength(text);
        const bound = Math.max(this.#compactAtBytes, 2 * this.#snapshotBytes);
        // Taken now, before any await: the changes of this batch and none after it.
        const snapshot =
          this.#snapshotNext || this.#fileBytes + bytes > bound ? snapshotText(state) : undefined;
        if (snapshot === undefined) {
          await this.#appendText(text);
          this.#fileBytes += bytes;
        } else {
          await this.#replace(snapshot);
          this.#snapshotNext = false;
          this.#fileBytes = this.#snapshotBytes = Buffer.byteLength(snapshot);
        }
      } catch (error) {
        // The file may end in part of this batch: the next write replaces it.
        this.#snapshotNext = true;
        for (const pending of batch) pending.reject(error);
        continue;
      }
      for (const pending of batch) pending.resolve();
    }
    // In the same step as the loop's last check: an append after it starts a new loop.
    this.#writing = false;
  }

  async #appendText(text: string): Promise<void> {
    const file = await open(this.#path, "a", 0o600);
    try {
      await file.write(text);
      await file.datasync();
    } finally {
      await file.close();
    }
  }

  async #replace(text: string): Promise<void> {
    const tmp = `${this.#path}.${process.pid}.${++tmpCounter}.tmp`;
    await mkdir(dirname(this.#path), { recursive: true });
    try {
      // 0600, like every file of the data directory (it names tenants and conversations).
      const file = await open(tmp, "w", 0o600);
      try {
        await file.writeFile(text, "utf8");
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, this.#path);
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  /** The snapshot line with every complete change line after it replayed. */
  #replay(text: string): Map<string, QueuedMessage> {
    const lines = text.split("\n");
    // What follows the last newline: "" for a whole file, else a torn append (dropped).
    const torn = lines.pop() as string;
    const header = lines.length > 0 ? (lines[0] as string) : torn;
    const snapshot = Snapshot.safeParse(this.#parse(header, 1));
    if (!snapshot.success) {
      const [issue] = issueLines(snapshot.error.issues);
      throw new CorruptDataError(
        `queue journal ${this.#path} does not start with a version 1 or 2 snapshot${issue ? ` (${issue})` : ""}`,
      );
    }
    const state = new Map(snapshot.data.messages.map((message) => [message.id, message]));
    for (const [index, line] of lines.entries()) {
      if (index === 0) continue;
      const change = JournalChangeSchema.safeParse(this.#parse(line, index + 1));
      if (!change.success) {
        const [issue] = issueLines(change.error.issues);
        throw new CorruptDataError(
          `queue journal ${this.#path} line ${index + 1} is not a change${issue ? ` (${issue})` : ""}`,
        );
      }
      apply(state, change.data);
    }
    return state;
  }

  #parse(line: string, number: number): unknown {
    try {
      return JSON.parse(line);
    } catch (error) {
      throw new CorruptDataError(`queue journal ${this.#path} line ${number} is not JSON`, {
        cause: error,
      });
    }
  }
}

/** Applies one change; one about a message the state no longer has changes nothing. */
function apply(state: Map<string, QueuedMessage>, change: JournalChange): void {
  if (change.op === "send") {
    state.set(change.message.id, change.message);
    return;
  }
  if (change.op === "delete") {
    state.delete(change.id);
    return;
  }
  const message = state.get(change.id);
  if (!message) return;
  state.set(
    change.id,
    change.op === "receive"
      ? {
          ...message,
          receive_count: change.receive_count,
          first_received_at: change.first_received_at,
        }
      : { ...message, dead_lettered_at: change.dead_lettered_at },
  );
}

function snapshotText(state: Map<string, QueuedMessage>): string {
  return `${JSON.stringify({ version: 2, messages: [...state.values()] })}\n`;
}
