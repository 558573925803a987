/**
 * A {@link QueueJournal} in one JSON file, replaced atomically on every save
 * (write a temporary file beside it, flush it to disk, rename it over the
 * journal), so a process killed at any moment leaves either the previous or
 * the new state, never a torn file.
 */
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import * as z from "zod";
import { issueLines } from "../../core/issues.ts";
import { CorruptDataError } from "../errors.ts";

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
    /** Set once the message is on the dead-letter list. */
    dead_lettered_at: z.number().optional(),
  })
  .readonly();

/** A message as the journal keeps it (the in-process queue's unit of state). */
export type QueuedMessage = z.infer<typeof QueuedMessageSchema>;

/** A message moved to the dead-letter list after `maxReceiveCount` receives. */
export type DeadLetter = QueuedMessage & { readonly dead_lettered_at: number };

/** Where the in-process queue keeps its messages across restarts. */
export interface QueueJournal {
  /** Every message saved last (pending and dead-lettered); none when nothing was saved yet. */
  load(): Promise<QueuedMessage[]>;
  /** Replaces the saved messages; never called concurrently by one queue. */
  save(messages: readonly QueuedMessage[]): Promise<void>;
}

const JournalFile = z.object({
  version: z.literal(1),
  messages: z.array(QueuedMessageSchema),
});

let tmpCounter = 0;

export class FileQueueJournal implements QueueJournal {
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
  }

  get path(): string {
    return this.#path;
  }

  async load(): Promise<QueuedMessage[]> {
    let text: string;
    try {
      text = await readFile(this.#path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new CorruptDataError(`queue journal ${this.#path} is not JSON`, { cause: error });
    }
    const parsed = JournalFile.safeParse(json);
    if (!parsed.success) {
      const [issue] = issueLines(parsed.error.issues);
      throw new CorruptDataError(
        `queue journal ${this.#path} is not a version 1 journal${issue ? ` (${issue})` : ""}`,
      );
    }
    return parsed.data.messages;
  }

  async save(messages: readonly QueuedMessage[]): Promise<void> {
    const text = `${JSON.stringify({ version: 1, messages })}\n`;
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
}
