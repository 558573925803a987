/**
 * A tenant's notification receiver for tests: an HTTP server on 127.0.0.1
 * that keeps every request (headers and raw body) and answers 503 to the
 * next `failing` requests, then 204.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { NotificationBody } from "../../functions/ports.ts";

/** One request the receiver got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What it answered. */
  readonly status: number;
}

export interface Receiver {
  readonly url: string;
  /** Every request, in order, failed ones included. */
  readonly requests: Received[];
  /** How many of the next requests get a 503. */
  failing: number;
  /** The bodies of the requests answered 2xx, parsed. */
  delivered(): (NotificationBody & { id: string })[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  const receiver = {
    url: "",
    requests,
    failing: 0,
    delivered: () =>
      requests
        .filter((r) => r.status < 300)
        .map((r) => ({
          ...(JSON.parse(r.body) as NotificationBody),
          id: String(r.headers["webhook-id"]),
        })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const status = receiver.failing > 0 ? 503 : 204;
      if (receiver.failing > 0) receiver.failing--;
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/autocompact`;
  return receiver;
}
