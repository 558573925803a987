/**
 * The local server's HTTP listener: the app on node:http through
 * @hono/node-server, with keep-alive connections kept usable after an early
 * answer.
 *
 * The app may answer before it has read the request body: a 400 for an
 * invalid conversation id, a 401, a 413 by `Content-Length`. The rest of the
 * body is then still on the connection, ahead of the client's next request.
 * @hono/node-server drains it, but once the body's web stream exists (the
 * body-limit middleware looks at it) that stream pauses the request whenever
 * its queue is full and nobody reads it, so the drain stalls and the adapter
 * closes the connection 500 ms later: under a client that was answered
 * `Connection: keep-alive` and has sent its next request on it, which fails
 * with "socket hang up".
 *
 * Here, once the answer is out, the body's readers are detached and the rest
 * of it is read and thrown away, so the connection serves the next request.
 * A rest larger than {@link DRAIN_LIMIT_BYTES}, or slower than
 * {@link DRAIN_TIMEOUT_MS}, closes the connection instead; the client is
 * still sending that body then, so it has sent no later request on it.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";

/** Bytes of an unread body thrown away after the answer before the connection is closed. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long the rest of an unread body may take to arrive before the connection is closed. */
export const DRAIN_TIMEOUT_MS = 5_000;

type FetchCallback = Parameters<typeof getRequestListener>[0];

export interface ServeAppOptions {
  readonly fetch: FetchCallback;
  readonly port: number;
  readonly hostname: string;
  /** Default {@link DRAIN_LIMIT_BYTES}. */
  readonly drainLimitBytes?: number;
  /** Default {@link DRAIN_TIMEOUT_MS}. */
  readonly drainTimeoutMs?: number;
}

/**
 * Serves `fetch` on `hostname:port`, as @hono/node-server's `serve` does;
 * `onListening` is called once the server listens (errors such as
 * `EADDRINUSE` are the server's `error` event).
 */
export function serveApp(
  options: ServeAppOptions,
  onListening?: (address: AddressInfo) => void,
): Server {
  const limitBytes = options.drainLimitBytes ?? DRAIN_LIMIT_BYTES;
  const timeoutMs = options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
  // The adapter's own clean-up is off: it is the drain that stalls (see above).
  const listener = getRequestListener(options.fetch, {
    hostname: options.hostname,
    autoCleanupIncoming: false,
  });
  const server = createServer((incoming, outgoing) => {
    outgoing.once("finish", () => discardUnreadBody(incoming, limitBytes, timeoutMs));
    void listener(incoming, outgoing);
  });
  server.listen(options.port, options.hostname, () => {
    onListening?.(server.address() as AddressInfo);
  });
  return server;
}

/**
 * Reads what is left of a request body once its answer is out, and throws it
 * away; closes the connection when more than `limitBytes` are left or they
 * take longer than `timeoutMs`.
 */
function discardUnreadBody(incoming: IncomingMessage, limitBytes: number, timeoutMs: number) {
  if (incoming.readableEnded || incoming.destroyed) return;
  let discarded = 0;
  const done = () => {
    clearTimeout(timer);
    incoming.off("data", onData);
    incoming.off("end", done);
    incoming.off("close", done);
  };
  const close = () => {
    done();
    incoming.socket?.destroy();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limitBytes) close();
  };
  const timer = setTimeout(close, timeoutMs);
  timer.unref();
  // The body's readers are done with it (the answer is out); left attached, an
  // unread web stream would pause the request again at every chunk.
  incoming.removeAllListeners("data");
  incoming.on("data", onData);
  incoming.once("end", done);
  incoming.once("close", done);
  // Nobody is waiting for this request any more: a client that goes away is no error.
  incoming.on("error", () => undefined);
  incoming.resume();
}
