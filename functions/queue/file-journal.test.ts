import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileQueueJournal, type QueuedMessage } from "./file-journal.ts";

const MESSAGE: QueuedMessage = {
  id: "m-1",
  body: "{}",
  group_id: "g",
  deduplication_id: "d-1",
  sequence: 0,
  sent_at: 1,
  receive_count: 0,
};

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
    await new FileQueueJournal(path).save([MESSAGE]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("keeps it 0600 when it replaces a journal that was readable by others", async () => {
    const path = join(dir, "queue.json");
    await writeFile(path, '{"version":1,"messages":[]}\n', { mode: 0o644 });
    await new FileQueueJournal(path).save([MESSAGE]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await new FileQueueJournal(path).load()).toEqual([MESSAGE]);
  });
});
