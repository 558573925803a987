/**
 * Writes the second corpus of docs/tuning.md: 40 conversations timed like
 * people work, so the prompt cache's lifetime matters. 20 are the seeded
 * generator's agent sessions (test/helpers/conversation.ts, tool-heavy), re-timed;
 * 20 are chat sessions (long answers, a small tool result in one turn of
 * five). Between turns, 52% of the gaps are 5 to 60 minutes (the share of
 * gaps over 5 minutes issue 30 measured on JP's own conversations), the
 * rest 10 s to 4 minutes; inside a turn, 1 to 20 s between events.
 *
 *   npx tsx scripts/tune-corpus.ts DIR
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Entry } from "../core/events.ts";
import { formatTimestamp } from "../core/timestamp.ts";
import { generateConversation, prng, text } from "../test/helpers/conversation.ts";

/** Re-times a stream: each turn_start after a gap between turns, each other event a few seconds on. */
function retime(entries: readonly Entry[], r: () => number): Entry[] {
  let ms = Date.UTC(2026, 10, 2, 9, 0, 0);
  return entries.map((entry) => {
    if (entry.type === "turn_start") {
      ms += r() < 0.52 ? 300_000 + r() * 3_300_000 : 10_000 + r() * 230_000;
    } else ms += 1_000 + r() * 19_000;
    if (entry.timestamp === undefined) return entry;
    return { ...entry, timestamp: formatTimestamp(BigInt(Math.round(ms)) * 1_000_000n) };
  });
}

/** A chat session: requests and long answers, a small tool result in about one turn of five. */
function chatSession(seed: number, turns: number): Entry[] {
  const r = prng(seed);
  const entries: Entry[] = [];
  const at = new Date(0).toISOString();
  for (let t = 0; t < turns; t++) {
    entries.push({ type: "turn_start", timestamp: at });
    entries.push({
      type: "chat_request",
      timestamp: at,
      content: text(r, 30 + Math.floor(r() * 300)),
    });
    if (r() < 0.2) {
      const id = `s${seed}t${t}`;
      entries.push({
        type: "tool_call_request",
        timestamp: at,
        id,
        name: "search",
        arguments: { q: text(r, 4) },
      });
      entries.push({
        type: "tool_call_response",
        timestamp: at,
        id,
        content: text(r, 40 + Math.floor(r() * 300)),
        is_error: false,
      });
    }
    entries.push({
      type: "chat_response",
      timestamp: at,
      message: text(r, 100 + Math.floor(r() * 1000)),
    });
  }
  return entries;
}

const dir = process.argv[2];
if (!dir) throw new Error("usage: npx tsx scripts/tune-corpus.ts DIR");
await mkdir(dir, { recursive: true });
for (let seed = 1; seed <= 20; seed++) {
  const r = prng(1000 + seed);
  const agent = generateConversation({ seed: 100 + seed, turns: 60 + ((seed * 53) % 141) });
  await writeFile(join(dir, `agent${seed}.json`), JSON.stringify(retime(agent, r)));
  const chat = chatSession(200 + seed, 30 + ((seed * 41) % 91));
  await writeFile(join(dir, `chat${seed}.json`), JSON.stringify(retime(chat, r)));
}
