import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CorruptDataError, QueueError } from "../errors.ts";
import { FileQueueJournal, type JournalChange, type QueuedMessage } from "./file-journal.ts";

const MESSAGE: QueuedMessage = {
  id: "m-1",
  body: "{}",
  group_id: "g",
  deduplication_id: "d-1",
  sequence: 0,
  sent_at: 1,
  receive_count: 0,
};

const message = (n: number): QueuedMessage => ({
  ...MESSAGE,
  id: `m-${n}`,
  deduplication_id: `d-${n}`,
  sequence: n,
});

async function opened(path: string, options?: { compactAtBytes: number }) {
  const journal = new FileQueueJournal(path, options);
  await journal.load();
  return journal;
}

describe("FileQueueJournal", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "autocompact-journal-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes the journal readable by its owner only (0600), like every file of the data directory", async () => {
    const path = join(dir, "queue.json");
    await (await opened(path)).append([{ op: "send", message: MESSAGE }]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("keeps it 0600 when it replaces a journal that was readable by others, carrying a version 1 journal over", async () => {
    const path = join(dir, "queue.json");
    await writeFile(path, `${JSON.stringify({ version: 1, messages: [MESSAGE] })}\n`, {
      mode: 0o644,
    });
    const journal = new FileQueueJournal(path);
    expect(await journal.load()).toEqual([MESSAGE]);
    await journal.append([{ op: "send", message: message(2) }]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await new FileQueueJournal(path).load()).toEqual([MESSAGE, message(2)]);
  });

  it("replays every change over the snapshot, in order", async () => {
    const path = join(dir, "queue.json");
    const journal = await opened(path);
    await journal.append([
      { op: "send", message: message(1) },
      { op: "send", message: message(2) },
      { op: "send", message: message(3) },
    ]);
    await journal.append([{ op: "receive", id: "m-1", receive_count: 1, first_received_at: 10 }]);
    await journal.append([
      { op: "receive", id: "m-2", receive_count: 1, first_received_at: 11 },
      { op: "delete", id: "m-3" },
    ]);
    await journal.append([{ op: "dead_letter", id: "m-2", dead_lettered_at: 20 }]);
    // A change about a message already gone changes nothing.
    await journal.append([{ op: "receive", id: "m-3", receive_count: 1, first_received_at: 12 }]);
    expect(await new FileQueueJournal(path).load()).toEqual([
      { ...message(1), receive_count: 1, first_received_at: 10 },
      { ...message(2), receive_count: 1, first_received_at: 11, dead_lettered_at: 20 },
    ]);
    // The first write was the snapshot, every later one an appended line.
    expect((await readFile(path, "utf8")).split("\n")).toHaveLength(7);
  });

  it("drops a torn last line (a crash in the middle of an append) and cuts it at the next write", async () => {
    const path = join(dir, "queue.json");
    const journal = await opened(path);
    await journal.append([{ op: "send", message: message(1) }]);
    await journal.append([{ op: "send", message: message(2) }]);
    const line = JSON.stringify({ op: "send", message: message(3) } satisfies JournalChange);
    await appendFile(path, line.slice(0, 40));

    const recovered = new FileQueueJournal(path);
    expect(await recovered.load()).toEqual([message(1), message(2)]);
    await recovered.append([{ op: "send", message: message(4) }]);
    await recovered.append([{ op: "delete", id: "m-1" }]);
    expect(await new FileQueueJournal(path).load()).toEqual([message(2), message(4)]);
  });

  it("refuses a complete line that is not a change, naming the file and the line", async () => {
    const path = join(dir, "queue.json");
    await writeFile(
      path,
      `${JSON.stringify({ version: 2, messages: [] })}\n${JSON.stringify({ op: "send", message: MESSAGE })}\n{"op":"shred"}\n`,
    );
    const error = await new FileQueueJournal(path).load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptDataError);
    expect((error as Error).message).toContain(`${path} line 3 is not a change`);
  });

  it("compacts the file once it grows past the bound: it stays bounded, the state whole", async () => {
    const path = join(dir, "queue.json");
    const journal = await opened(path, { compactAtBytes: 2_048 });
    for (let n = 1; n <= 100; n++) {
      await journal.append([{ op: "send", message: message(n) }]);
      if (n % 10 !== 0) await journal.append([{ op: "delete", id: `m-${n}` }]);
    }
    // About 14 KB of lines were appended; compactions keep the file under the
    // bound or twice its last snapshot (10 messages of about 115 bytes).
    expect((await stat(path)).size).toBeLessThanOrEqual(4_096);
    expect(await new FileQueueJournal(path).load()).toEqual(
      [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map(message),
    );
  });

  it("writes a snapshot after a failed write, so the changes of that write are kept by the next", async () => {
    const sub = join(dir, "sub");
    const path = join(sub, "queue.json");
    await mkdir(sub);
    const journal = await opened(path);
    await journal.append([{ op: "send", message: message(1) }]);
    await rm(sub, { recursive: true });
    await writeFile(sub, "a file where the directory was");
    await expect(journal.append([{ op: "send", message: message(2) }])).rejects.toThrow();
    await rm(sub);
    await journal.append([{ op: "send", message: message(3) }]);
    expect(await new FileQueueJournal(path).load()).toEqual([message(1), message(2), message(3)]);
  });

  it("refuses an append before the journal is loaded", async () => {
    const journal = new FileQueueJournal(join(dir, "queue.json"));
    await expect(journal.append([{ op: "send", message: MESSAGE }])).rejects.toThrow(QueueError);
  });
});
