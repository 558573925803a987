import { connect } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { harness } from "../../test/helpers/service.ts";
import { answerClientError } from "./client-error.ts";

/** Writes `request` on a fresh connection and reads everything until the server closes it. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

/** The status line, content-type and body of a raw HTTP/1.1 answer. */
function parse(answer: string) {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  const [status, ...headers] = head.split("\r\n");
  const header = (name: string) =>
    headers.find((line) => line.toLowerCase().startsWith(`${name}:`))?.replace(/^[^:]+:\s*/, "");
  return {
    status,
    contentType: header("content-type"),
    contentLength: Number(header("content-length")),
    connection: header("connection"),
    body: body ? (JSON.parse(body) as unknown) : undefined,
    rawBody: body,
  };
}

describe("answerClientError (the local server's answer to a request node:http cannot parse)", () => {
  let server: ReturnType<typeof serve>;
  let port: number;

  beforeAll(async () => {
    const { app } = harness();
    server = await new Promise((resolve) => {
      const instance = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
        resolve(instance),
      );
      instance.on("clientError", answerClientError);
    });
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers oversized headers with a 431 problem, not Node's bare 431", async () => {
    const answer = parse(
      await exchange(
        port,
        `GET /v1/conversations/c HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(answer.status).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(answer.contentType).toBe("application/problem+json");
    expect(answer.connection).toBe("close");
    expect(answer.contentLength).toBe(Buffer.byteLength(answer.rawBody));
    expect(answer.body).toEqual({
      type: "/problems/headers-too-large",
      title: "Request headers too large",
      status: 431,
      detail:
        "the request's headers are larger than the server accepts (16384 bytes in all): send fewer or shorter headers",
    });
  });

  it("answers a request that is not HTTP/1.1 with a 400 problem", async () => {
    const answer = parse(await exchange(port, "NONSENSE\r\n\r\n"));
    expect(answer.status).toBe("HTTP/1.1 400 Bad Request");
    expect(answer.contentType).toBe("application/problem+json");
    expect(answer.body).toEqual({
      type: "/problems/invalid-request",
      title: "Invalid request",
      status: 400,
      detail: "the request is not valid HTTP/1.1 (HPE_INVALID_METHOD: Invalid method encountered)",
    });
  });

  it("still serves well-formed requests", async () => {
    const answer = parse(
      await exchange(port, "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    );
    expect(answer.status).toBe("HTTP/1.1 200 OK");
    expect(answer.body).toEqual({ ok: true });
  });
});
