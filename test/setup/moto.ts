/**
 * Vitest globalSetup: one moto server (Python moto 5.x, `moto_server`) for
 * the whole run, serving SQS, KMS and EventBridge on one loopback port, its
 * endpoint handed to the tests through `provide`/`inject` (see
 * test/helpers/moto.ts). `AUTOCOMPACT_TEST_MOTO_ENDPOINT` points the tests at
 * a moto server already running instead (`.ci/run` starts one so).
 *
 * Without `moto_server` the run goes on: the suites on moto fail with the
 * reason, the others still run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { TestProject } from "vitest/node";

/** What the tests receive: the server's endpoint, or why there is none. */
export type MotoTestEnvironment =
  | { readonly endpoint: string; readonly error?: undefined }
  | { readonly endpoint?: undefined; readonly error: string };

declare module "vitest" {
  export interface ProvidedContext {
    moto: MotoTestEnvironment;
  }
}

/** How long the server may take to say where it listens (a Python start is about 1 s). */
const START_TIMEOUT_MS = 30_000;

/** What werkzeug prints once it listens, e.g. ` * Running on http://127.0.0.1:36157`. */
const LISTENING = /Running on (http:\/\/127\.0\.0\.1:\d+)/;

/** Starts `moto_server` on loopback on a port the OS picks; its endpoint and process. */
function startMoto(): Promise<{ endpoint: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`moto_server did not listen within ${START_TIMEOUT_MS} ms: ${output}`));
    }, START_TIMEOUT_MS);
    const listen = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = LISTENING.exec(output);
      if (!found?.[1]) return;
      clearTimeout(timer);
      // Its request log is not the tests' output: read and dropped from now on.
      child.stderr?.off("data", listen).resume();
      child.stdout?.off("data", listen).resume();
      resolve({ endpoint: found[1], child });
    };
    child.stderr?.on("data", listen);
    child.stdout?.on("data", listen);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        error.code === "ENOENT"
          ? new Error(
              "moto_server is not installed: install Python moto 5.x with its server (pip install 'moto[server]') or set AUTOCOMPACT_TEST_MOTO_ENDPOINT to a running moto server",
            )
          : error,
      );
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`moto_server exited (${signal ?? code}) before listening: ${output}`));
    });
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.AUTOCOMPACT_TEST_MOTO_ENDPOINT;
  if (external) {
    project.provide("moto", { endpoint: external });
    return async () => {};
  }
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill("SIGKILL");
  try {
    const moto = await startMoto();
    child = moto.child;
    // A run that ends without its teardown (a crash) leaves no server behind.
    process.once("exit", killOnExit);
    project.provide("moto", { endpoint: moto.endpoint });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.error(`[moto setup] ${reason}`);
    project.provide("moto", { error: reason });
  }
  return async () => {
    process.off("exit", killOnExit);
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      // A server that does not stop on SIGTERM within 5 s is killed.
      const timer = setTimeout(() => running.kill("SIGKILL"), 5_000);
      running.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      running.kill("SIGTERM");
    });
  };
}
