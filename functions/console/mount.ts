/**
 * Mounts the console (`GET /console`) and the API reference (`GET /docs`) on
 * the API's app. Their module and assets load on their first request, so a
 * turn post (the webhook) never loads or parses them.
 */
import type { Context, Hono } from "hono";
import type { ConsoleApp } from "./app.ts";

/** The paths the console and the API reference answer. */
export const CONSOLE_PATHS = ["/console", "/console/*", "/docs", "/docs/*"] as const;

/** Routes the console's and the docs' paths to their app, imported on first use. */
// biome-ignore lint/suspicious/noExplicitAny: any app's environment; the console uses none of it.
export function mountConsole(app: Hono<any>): void {
  let loaded: Promise<ConsoleApp> | undefined;
  const handler = async (c: Context) => {
    loaded ??= import("./app.ts").then(({ createConsoleApp }) => createConsoleApp());
    return (await loaded).fetch(c.req.raw);
  };
  for (const path of CONSOLE_PATHS) app.get(path, handler);
}
