/**
 * The harness of the agent loops of docs/integrate.md (test/e2e/agent-loops*.test.ts):
 * the local runtime the snippets talk to, the snippets extracted from
 * docs/integrate.md by their `<!-- snippet: … -->` markers, type-checked and run as
 * written in a child process (the user's questions on stdin)
 * against a stub model ({@link runAgentLoop}), and what a test reads back
 * from the service to compare with what the stub models received.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { expect } from "vitest";
import { AutocompactClient, type ListedCompaction } from "../../client/index.ts";
import type { LocalService } from "../../functions/local/runtime.ts";
import { RUNTIME_KEY, startTestRuntime } from "./local-runtime.ts";
import { type ModelStub, type StubHandler, startModelStub } from "./model-stub.ts";
import { typeCheckGroups } from "./typecheck.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The window the runtime's catalog gives the snippets' models, so a few turns fill it. */
const WINDOW = 3_000;

/**
 * The runtime's service layer: a rule that fires within the questions. It
 * leaves compaction off (D50's default), as a deployment would: each snippet
 * turns it on for its conversation in its first lines.
 */
const AUTO = {
  trigger_ratio: 0.5,
  min_turns: 2,
  rule: { keep_first: 1, keep_last: 1, tool_calls: "strip", reasoning: "strip" },
} as const;

/** The user's questions, one a line on the snippet's stdin: one turn each. */
export const QUESTIONS = [
  "Which test runner does this project use?",
  "Which linter?",
  "Which Node version does it need?",
  "Which web framework serves the API?",
  "Which AWS SDK clients does it use?",
  "What does npm start run?",
];

/** The one tool of every snippet; the stubs call it with `{path: "package.json"}`. */
export const TOOL = "read_file";

/** A stripped result of {@link TOOL}, in every format (docs/architecture.md §15). */
export const COMPACTED_RESULT = `[compacted] ${TOOL}: success`;

/** The final answer the stubs give to question `turn`. */
export function answerText(turn: number): string {
  return `Answer ${turn}: see package.json.`;
}

/** The runtime the snippets run against. */
export interface AgentLoopRuntime {
  readonly service: LocalService;
  /** The repository's package.json, what every `read_file` call returns. */
  readonly packageJson: string;
  /** A client of the runtime. */
  client(): AutocompactClient;
  /** Writes the snippet `name` of docs/integrate.md to a file inside the repository. */
  writeSnippet(name: string): Promise<{ file: string; source: string }>;
  /** Starts a stub model, closed by `stop`. */
  startStub(handler: StubHandler): Promise<ModelStub>;
  /** Closes the stubs, stops the runtime, removes its folders and env stubs. */
  stop(): Promise<void>;
}

/**
 * Starts the local runtime (in-memory store, in-process queue and compactor)
 * whose catalog gives `models` the small {@link WINDOW}: the snippets post
 * the model ids a platform would.
 */
export async function startAgentLoopRuntime(models: readonly string[]): Promise<AgentLoopRuntime> {
  const packageJson = await readFile(join(ROOT, "package.json"), "utf8");
  // Inside the repository, so the snippets' `autocompact/client` resolves (package self-reference).
  const snippetDir = await mkdtemp(join(ROOT, ".agent-loops-"));
  const runtime = await startTestRuntime("autocompact-agent-loops-", {
    catalog: Object.fromEntries(models.map((model) => [model, WINDOW])),
    config: AUTO,
  });
  const stubs: ModelStub[] = [];
  return {
    service: runtime.service,
    packageJson,
    client: () => new AutocompactClient({ url: runtime.service.url, key: RUNTIME_KEY }),
    async writeSnippet(name) {
      const source = await docSnippet(name);
      const file = join(snippetDir, `${name}.ts`);
      await writeFile(file, source);
      return { file, source };
    },
    async startStub(handler) {
      const stub = await startModelStub(handler);
      stubs.push(stub);
      return stub;
    },
    async stop() {
      for (const stub of stubs) await stub.close();
      await runtime.stop();
      await rm(snippetDir, { recursive: true, force: true });
    },
  };
}

/** A snippet's run: its conversation, the requests its stub model received, the bands at the end. */
export interface AgentLoopRun {
  readonly id: string;
  readonly client: AutocompactClient;
  /** The request bodies the stub model received, two a question (the call, then the answer). */
  readonly requests: Record<string, unknown>[];
  /** The conversation's bands once the last turn is decided ({@link settle}). */
  readonly compactions: ListedCompaction[];
}

/**
 * Runs the snippet `snippet` of docs/integrate.md against `runtime` and a stub model
 * answering with `stub`: checks the format and model it declares, runs it
 * with the env `env` gives for the stub's URL and `lines` on its stdin (one
 * turn each, {@link QUESTIONS} unless given), and checks it printed the last
 * answer, enabled compaction for its conversation (and set nothing else), and
 * made `calls` model calls (two a question unless given).
 */
export async function runAgentLoop(
  runtime: AgentLoopRuntime,
  options: {
    readonly snippet: string;
    readonly format: string;
    readonly model: string;
    readonly stub: StubHandler;
    readonly env: (stubUrl: string) => Record<string, string>;
    readonly lines?: readonly string[];
    readonly calls?: number;
  },
): Promise<AgentLoopRun> {
  const lines = options.lines ?? QUESTIONS;
  const stub = await runtime.startStub(options.stub);
  const { file, source } = await runtime.writeSnippet(options.snippet);
  const declaration = declared(source);
  expect([declaration.format, declaration.model]).toEqual([options.format, options.model]);
  const client = runtime.client();

  const env = { ...autocompactEnv(runtime), ...options.env(stub.url) };
  const stdout = await runSnippet(file, env, lines);
  expect(stdout).toContain(answerText(lines.length - 1));
  // The snippet turned compaction on itself, and nothing more: the rest is the service layer's.
  expect((await client.getConfig(declaration.id)).conversation).toEqual({
    compaction: { auto: { enabled: true } },
  });
  const compactions = await settle(client, declaration.id, lines.length);
  const requests = stub.requests.map((request) => request.body as Record<string, unknown>);
  expect(requests).toHaveLength(options.calls ?? 2 * lines.length);
  return { id: declaration.id, client, requests, compactions };
}

/** The body of the ```ts block right after `<!-- snippet: name -->` in docs/integrate.md. */
export async function docSnippet(name: string): Promise<string> {
  const readme = await readFile(join(ROOT, "docs/integrate.md"), "utf8");
  const marker = `<!-- snippet: ${name} -->\n\`\`\`ts\n`;
  const start = readme.indexOf(marker);
  expect(start, `docs/integrate.md has the snippet ${name}`).toBeGreaterThanOrEqual(0);
  const body = readme.slice(start + marker.length);
  const end = body.indexOf("\n```\n");
  expect(end, `the snippet ${name} ends`).toBeGreaterThan(0);
  return `${body.slice(0, end)}\n`;
}

/** The conversation id, format and model a snippet declares (`const id = "…"`, …). */
function declared(source: string): { id: string; format: string; model: string } {
  const value = (name: string) => {
    const match = new RegExp(`^const ${name} = "([^"]+)";`, "m").exec(source);
    if (!match?.[1]) throw new Error(`the snippet declares no ${name}`);
    return match[1];
  };
  return { id: value("id"), format: value("format"), model: value("model") };
}

/**
 * What `tsc` says of each group of snippet files, type-checked as a user's
 * project would (strict, with the SDKs' and the client's types): "" when
 * clean. In this process and one program (test/helpers/typecheck.ts).
 */
export function typeCheckSnippets(groups: readonly (readonly string[])[]): string[] {
  return typeCheckGroups(
    groups,
    {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2023"],
      types: ["node"],
      allowImportingTsExtensions: true,
      skipLibCheck: true,
    },
    ROOT,
  );
}

/**
 * Runs a snippet as a platform would, `lines` on stdin, the SDKs' own env:
 * compiled by esbuild, as tsx compiles it, with `autocompact/client` from
 * its sources (the tsconfig's paths, as tsx resolves it) and the SDKs left
 * to Node, then run by Node itself. Under tsx's loader each run cost about
 * 1.3 s more CPU: its module hooks answer every import from another thread.
 */
async function runSnippet(
  file: string,
  env: Record<string, string>,
  lines: readonly string[],
): Promise<string> {
  const compiled = file.replace(/\.ts$/, ".mjs");
  await build({
    absWorkingDir: ROOT,
    entryPoints: [file],
    outfile: compiled,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  const pending = run(process.execPath, [compiled], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 45_000,
  });
  pending.child.stdin?.end(`${lines.join("\n")}\n`);
  try {
    return (await pending).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`the snippet failed: ${String(error)}\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
}

/** The env a snippet reads to reach the runtime (`AUTOCOMPACT_URL`, `AUTOCOMPACT_KEY`). */
function autocompactEnv(runtime: AgentLoopRuntime): Record<string, string> {
  return { AUTOCOMPACT_URL: runtime.service.url, AUTOCOMPACT_KEY: RUNTIME_KEY };
}

/**
 * The conversation's end state, once the last turn's evaluation has decided
 * (the loop reads no view after it): its bands, each fired after one turn,
 * since the loop posts a turn only after the view as evaluated after the
 * previous one (no evaluation of it is stale).
 */
async function settle(
  client: AutocompactClient,
  conversation: string,
  turns: number,
): Promise<ListedCompaction[]> {
  const afterTurn = turns - 1;
  const summary = await client.conversation(conversation, { afterTurn });
  expect(summary).toMatchObject({
    turn_count: turns,
    evaluated_through: afterTurn,
    decided_through: afterTurn,
  });
  const { compactions } = await client.compactions(conversation);
  const auto = compactions.filter((c) => c.source === "auto");
  expect(auto.length).toBeGreaterThanOrEqual(1);
  // A band fired after some turn before the last, so a call shows it.
  expect(auto.some((c) => (c.trigger?.turn ?? afterTurn) < afterTurn)).toBe(true);
  return compactions;
}

/**
 * The turns that the automatic bands fired after turns up to `turn` cover,
 * in order: those the view read with `afterTurn: turn` compacts.
 */
export function bandedThrough(compactions: readonly ListedCompaction[], turn: number): number[] {
  const turns = new Set<number>();
  for (const band of compactions) {
    if (band.source !== "auto" || band.trigger === undefined || band.trigger.turn > turn) continue;
    for (let t = band.from_turn; t <= band.to_turn; t++) turns.add(t);
  }
  return [...turns].sort((a, b) => a - b);
}

/** Whether `turn` lies in an automatic band. */
export function inAutoBand(compactions: readonly ListedCompaction[], turn: number): boolean {
  return compactions.some((c) => c.source === "auto" && c.from_turn <= turn && turn <= c.to_turn);
}

/** `turns` without repeats, in order. */
export function distinctSorted(turns: Iterable<number>): number[] {
  return [...new Set(turns)].sort((a, b) => a - b);
}
