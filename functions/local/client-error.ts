/**
 * The local server's answer to a request node:http cannot parse (its
 * `clientError` event): oversized headers, a malformed request, a request
 * too slow to arrive. Without a listener Node writes a bare status line
 * (`431 Request Header Fields Too Large`, no body); with this one every such
 * answer is an RFC 9457 problem like the app's own. On Lambda API Gateway
 * refuses these requests itself; this is for `npm start`.
 *
 * Wired with `server.on("clientError", answerClientError)`.
 */
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { InvalidInputError } from "../../core/errors.ts";
import { problemHeaders, REJECTED, RequestRejectedError, toProblem } from "../api/errors.ts";

/** What node:http's parser reports (`code` is llhttp's `HPE_*` or Node's `ERR_*`). */
type ClientError = Error & { readonly code?: string; readonly reason?: string };

/** The error a parser failure answers with. */
function errorOf(error: ClientError): Error {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new RequestRejectedError(
        REJECTED.headersTooLarge,
        `the request's headers are larger than the server accepts (${maxHeaderSize} bytes in all): send fewer or shorter headers`,
        { cause: error },
      );
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new RequestRejectedError(
        REJECTED.payloadTooLarge,
        "the body's chunk extensions are larger than the server accepts: send the body without chunk extensions",
        { cause: error },
      );
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new RequestRejectedError(
        REJECTED.requestTimeout,
        "the request did not arrive in time: send its headers and body without pausing",
        { cause: error },
      );
    default:
      return new InvalidInputError(
        `the request is not valid HTTP/1.1 (${error.code ?? error.name}: ${error.reason ?? error.message})`,
        { cause: error },
      );
  }
}

/**
 * Answers a request node:http refused with a problem and closes the
 * connection, as Node's default would (with a bare status line). Nothing is
 * written if the peer is gone or an answer on this connection already began.
 */
export function answerClientError(error: ClientError, socket: Duplex): void {
  // Node's own default checks the in-flight response the same way (it has no public accessor).
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const cause = errorOf(error);
  const problem = toProblem(cause);
  const body = JSON.stringify(problem);
  const headers = {
    ...problemHeaders(cause),
    "content-length": String(Buffer.byteLength(body)),
    connection: "close",
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head.join("")}\r\n${body}`,
  );
}
