/**
 * The local runtime's admin routes (`npm start` only; the deployed API has
 * none): the in-process queue's dead letters, for `autocompact dlq` run in
 * another process. The queue lives in the service's process and its journal
 * is rewritten by it on every change, so another process must not edit the
 * journal while it runs: it asks the running service instead.
 *
 * - `GET /local/dead-letters`: `{"dead_letters": [...]}`, oldest first, each
 *   with its conversation's last recorded failure (functions/queue/dead-letters.ts).
 * - `POST /local/dead-letters/redrive`: moves them all back to the queue,
 *   `{"moved": n}`; the consumer evaluates them again.
 *
 * They span every tenant, so they take the local operator's key only: the
 * dev key (`AUTOCOMPACT_DEV_KEY`) as a bearer token, else 401.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ConversationStore } from "../ports.ts";
import { describeDeadLetter } from "../queue/dead-letters.ts";
import type { InProcessQueue } from "../queue/in-process.ts";

/** The path prefix of every admin route. */
export const ADMIN_PREFIX = "/local/";

export interface LocalAdminDeps {
  readonly queue: Pick<InProcessQueue, "deadLetters" | "redrive">;
  readonly store: Pick<ConversationStore, "lastFailure">;
  readonly devKey: string;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": status < 400 ? "application/json" : "application/problem+json" },
  });

/** Answers the admin routes; `undefined` for any other path (the API's). */
export function localAdmin(
  deps: LocalAdminDeps,
): (request: Request) => Promise<Response> | undefined {
  const expected = digest(`Bearer ${deps.devKey}`);
  return (request) => {
    const path = new URL(request.url).pathname;
    if (!path.startsWith(ADMIN_PREFIX)) return undefined;
    return (async () => {
      const given = digest(request.headers.get("authorization") ?? "");
      if (!timingSafeEqual(given, expected)) {
        return json(401, {
          type: "/problems/unauthorized",
          title: "Unauthorized",
          status: 401,
          detail: "the local admin routes take the dev key (AUTOCOMPACT_DEV_KEY) as a bearer token",
        });
      }
      if (path === "/local/dead-letters" && request.method === "GET") {
        const entries = await Promise.all(
          deps.queue.deadLetters().map((dead) =>
            describeDeadLetter(
              {
                id: dead.id,
                body: dead.body,
                receiveCount: dead.receive_count,
                sentAt: dead.sent_at,
              },
              (ref) => deps.store.lastFailure(ref),
            ),
          ),
        );
        return json(200, { dead_letters: entries });
      }
      if (path === "/local/dead-letters/redrive" && request.method === "POST") {
        return json(200, { moved: await deps.queue.redrive() });
      }
      return json(404, {
        type: "/problems/not-found",
        title: "Not Found",
        status: 404,
        detail: `no admin route ${request.method} ${path}`,
      });
    })();
  };
}
