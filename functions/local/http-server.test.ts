/**
 * The local server keeps a keep-alive connection usable after answering a
 * request before reading its body: a real server, a real keep-alive agent
 * with one socket, two requests on it.
 */
import { Agent, request, type Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { messageTurns } from "../../test/helpers/builders.ts";
import { ALICE_KEY, harness } from "../../test/helpers/service.ts";
import { serveApp } from "./http-server.ts";

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  /** The client's end of the connection: the same port is the same connection. */
  readonly localPort: number | undefined;
}

/** Sends one request through `agent`; `body` is written with a Content-Length, or chunked. */
function send(
  agent: Agent,
  port: number,
  options: {
    readonly path: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
    readonly chunked?: boolean;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: options.path,
        method: "POST",
        agent,
        headers: {
          ...(body ? { "content-type": "application/json" } : {}),
          ...(body && !options.chunked ? { "content-length": String(body.length) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            localPort: req.socket?.localPort,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const auth = { authorization: `Bearer ${ALICE_KEY}` };
/** A body of about `bytes` bytes (JSON; the answer comes before it is read). */
const bigBody = (bytes: number) =>
  JSON.stringify({ turn: 0, events: [], padding: "x".repeat(bytes) });
/** The request that follows on the same connection: a valid turn, stored (202). */
const validTurn = {
  path: "/v1/conversations/c1/turns",
  headers: auth,
  body: JSON.stringify({ turn: 0, events: messageTurns(1) }),
};

let server: Server | undefined;
let agent: Agent | undefined;
/** Connections the server accepted. */
let connections = 0;
afterEach(async () => {
  agent?.destroy();
  const closing = server;
  server = undefined;
  if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
});

async function start(
  bodyLimitBytes?: number,
  drain: { drainLimitBytes?: number; drainTimeoutMs?: number } = {},
): Promise<{ port: number; agent: Agent }> {
  const { app } = harness(bodyLimitBytes ? { bodyLimitBytes } : {});
  const listening = await new Promise<Server>((resolve, reject) => {
    const instance = serveApp({ fetch: app.fetch, port: 0, hostname: "127.0.0.1", ...drain }, () =>
      resolve(instance),
    );
    instance.once("error", reject);
  });
  server = listening;
  connections = 0;
  listening.on("connection", () => {
    connections++;
  });
  // One socket: the second request can only go out on the first one's connection.
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return { port: (listening.address() as { port: number }).port, agent };
}

describe("local server: a request answered before its body was read leaves the connection usable", () => {
  const invalidId = "/v1/conversations/bad%20id/turns";
  it.each([
    // The client has sent all of it when the answer comes: it sends its next request at once.
    {
      answer: "400 (invalid conversation id)",
      status: 400,
      path: invalidId,
      headers: auth,
      bytes: 1_000_000,
    },
    // The client is still sending it when the answer comes.
    {
      answer: "400 (invalid conversation id)",
      status: 400,
      path: invalidId,
      headers: auth,
      bytes: 4_000_000,
    },
    {
      answer: "401 (no API key)",
      status: 401,
      path: "/v1/conversations/c1/turns",
      headers: {},
      bytes: 4_000_000,
    },
  ])(
    "after a $answer to a body of $bytes bytes, the next request goes out on the same connection and is answered",
    async ({ path, headers, status, bytes }) => {
      const { port, agent } = await start();

      const first = await send(agent, port, { path, headers, body: bigBody(bytes) });
      expect(first.status).toBe(status);
      expect(first.connection).toBe("keep-alive");

      const second = await send(agent, port, validTurn);
      expect(second.status).toBe(202);
      expect(second.localPort).toBe(first.localPort);
      expect(connections).toBe(1);
    },
  );

  it("after a 413 by Content-Length, and after a 413 for a chunked body read past the limit", async () => {
    const { port, agent } = await start(10_000);

    const declared = await send(agent, port, {
      path: "/v1/conversations/c1/turns",
      headers: auth,
      body: bigBody(4_000_000),
    });
    expect(declared.status).toBe(413);
    const chunked = await send(agent, port, {
      path: "/v1/conversations/c1/turns",
      headers: auth,
      body: bigBody(4_000_000),
      chunked: true,
    });
    expect(chunked.status).toBe(413);

    const next = await send(agent, port, validTurn);
    expect(next.status).toBe(202);
    expect([chunked.localPort, next.localPort]).toEqual([declared.localPort, declared.localPort]);
    expect(connections).toBe(1);
  });
});

/**
 * Writes a request head announcing `declared` body bytes and `sent` of them on
 * a raw connection; resolves with what the server wrote once it closed the
 * connection, or after `waitMs` with the connection still open.
 */
function partialUpload(
  port: number,
  declared: number,
  sent: number,
  waitMs: number,
): Promise<{ closed: boolean; answer: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    let closed = false;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("error", () => undefined); // a reset is a close too
    const timer = setTimeout(() => {
      resolve({ closed, answer });
      socket.destroy();
    }, waitMs);
    socket.on("close", () => {
      clearTimeout(timer);
      closed = true;
      resolve({ closed, answer });
    });
    socket.write(
      `POST /v1/conversations/bad%20id/turns HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ALICE_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
    );
    socket.write("x".repeat(sent));
  });
}

describe("local server: the rest of an unread body is bounded", () => {
  it("closes the connection when the rest does not arrive in time", async () => {
    const { port } = await start(undefined, { drainTimeoutMs: 50 });
    const { closed, answer } = await partialUpload(port, 1_000, 10, 5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(closed).toBe(true);
  });

  it("closes the connection when more than the drain limit is left", async () => {
    const { port } = await start(undefined, { drainLimitBytes: 1_000, drainTimeoutMs: 60_000 });
    const { closed } = await partialUpload(port, 1_000_000, 200_000, 5_000);
    expect(closed).toBe(true);
  });

  it("keeps the connection while the rest is within both bounds", async () => {
    const { port } = await start();
    const { closed, answer } = await partialUpload(port, 1_000_000, 200_000, 1_000);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(closed).toBe(false);
  });
});
