/**
 * Bounds of the request and HTTP edge cases (issue 10, items 3 and 6): input
 * that used to reach the store (a 500 there) or answer with a body too large
 * for Lambda, and the order and shape of the answers to unauthenticated,
 * content-encoded or non-UTF-8 requests. Expectations are literals.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../functions/keys.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

const at = "2026-01-01T00:00:00Z";
const oneTurn = [
  { type: "turn_start", timestamp: at },
  { type: "chat_request", timestamp: at, content: "hi" },
];
const TURNS = "/v1/conversations/c/turns";

/** A raw post: the body as given (bytes or text), only the headers given. */
const raw = (
  h: ReturnType<typeof harness>,
  body: string | Uint8Array,
  headers: Record<string, string>,
  path = TURNS,
) => h.app.request(path, { method: "POST", headers, body });

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Record<string, unknown>;
}

type Schema = {
  type?: string | string[];
  $ref?: string;
  maxLength?: number;
  maximum?: number;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
};
type Document = {
  components: { schemas: Record<string, Schema> };
  paths: Record<string, Record<string, { parameters?: { name: string; schema: Schema }[] }>>;
};
const openapi = async () =>
  (await (await harness().app.request("/v1/openapi.json")).json()) as Document;

describe("bounds of the request (documented, and a 400 past them)", () => {
  it("refuses a turn above 999999999 (the key codec's largest) in the request schema", async () => {
    const h = harness();
    for (const turn of [1_000_000_000, 9_007_199_254_740_991]) {
      const response = await h.request("POST", TURNS, { turn, events: oneTurn });
      expect(response.status).toBe(400);
      expect(await problem(response)).toEqual({
        type: "/problems/invalid-request",
        title: "Invalid request",
        status: 400,
        detail: "the turn is invalid: /turn: turn must be at most 999999999",
        errors: [{ pointer: "/turn", detail: "turn must be at most 999999999" }],
      });
    }
    // The bound itself passes the schema (and is a gap on an empty conversation).
    const largest = await h.request("POST", TURNS, { turn: 999_999_999, events: oneTurn });
    expect(largest.status).toBe(409);
    const document = await openapi();
    for (const body of ["JpTurnRequest", "OpenaiChatTurnRequest", "AnthropicMessagesTurnRequest"])
      expect(document.components.schemas[body]?.properties?.turn?.maximum).toBe(999_999_999);
  });

  it("refuses a model id longer than 256 characters (a 1 MiB id was a 500 in DynamoDB)", async () => {
    const h = harness();
    const huge = await h.request("POST", TURNS, {
      turn: 0,
      model: { id: "m".repeat(1024 * 1024) },
      events: oneTurn,
    });
    expect(huge.status).toBe(400);
    expect(await problem(huge)).toEqual({
      type: "/problems/invalid-request",
      title: "Invalid request",
      status: 400,
      detail: "the turn is invalid: /model/id: must be at most 256 characters (got 1048576)",
      errors: [{ pointer: "/model/id", detail: "must be at most 256 characters (got 1048576)" }],
    });
    const longest = await h.request("POST", TURNS, {
      turn: 0,
      model: { id: "m".repeat(256) },
      events: oneTurn,
    });
    expect(longest.status).toBe(202);
  });

  it("refuses a spec longer than 1024 characters and summary settings past their bounds", async () => {
    const h = harness();
    expect((await h.request("POST", TURNS, { turn: 0, events: oneTurn })).status).toBe(202);
    const spec = await h.request("POST", "/v1/conversations/c/compactions", {
      spec: `r${" ".repeat(1024)}`,
    });
    expect(spec.status).toBe(400);
    expect(await problem(spec)).toMatchObject({
      type: "/problems/invalid-request",
      detail: "spec must be at most 1024 characters (got 1025)",
    });
    const config = await h.request("PUT", "/v1/conversations/c/config", {
      conversation: {
        compaction: {
          auto: {
            rule: {
              summary: { instructions: "i".repeat(16_385), model: { id: "m".repeat(257) } },
            },
          },
        },
      },
    });
    expect(config.status).toBe(400);
    expect(await problem(config)).toEqual({
      type: "/problems/invalid-config",
      title: "Invalid configuration",
      status: 400,
      detail:
        "conversation.compaction.auto.rule.summary.instructions: must be at most 16384 characters (got 16385); conversation.compaction.auto.rule.summary.model.id: must be at most 256 characters (got 257)",
      errors: [
        {
          detail:
            "conversation.compaction.auto.rule.summary.instructions: must be at most 16384 characters (got 16385)",
        },
        {
          detail:
            "conversation.compaction.auto.rule.summary.model.id: must be at most 256 characters (got 257)",
        },
      ],
    });
  });

  it("documents a bound for every string of the request bodies and parameters", async () => {
    const document = await openapi();
    const unbounded: string[] = [];
    const walk = (schema: Schema | undefined, where: string, seen: Set<string>) => {
      if (!schema) return;
      if (schema.$ref) {
        const name = schema.$ref.replace("#/components/schemas/", "");
        // Events and provider messages are bounded by the body limit (413) and stored in chunks.
        if (name === "Event" || name.endsWith("Message") || seen.has(name)) return;
        walk(document.components.schemas[name], where, new Set([...seen, name]));
        return;
      }
      const types = [schema.type ?? []].flat();
      if (
        types.includes("string") &&
        schema.maxLength === undefined &&
        schema.enum === undefined &&
        schema.const === undefined
      ) {
        unbounded.push(where);
      }
      for (const [key, child] of Object.entries(schema.properties ?? {}))
        walk(child, `${where}.${key}`, seen);
      walk(schema.items, `${where}[]`, seen);
      for (const child of [
        ...(schema.anyOf ?? []),
        ...(schema.oneOf ?? []),
        ...(schema.allOf ?? []),
      ])
        walk(child, where, seen);
      if (typeof schema.additionalProperties === "object")
        walk(schema.additionalProperties, `${where}.*`, seen);
    };
    for (const name of ["TurnRequest", "CompactionRequest", "ConfigTree"])
      walk(document.components.schemas[name], name, new Set([name]));
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item))
        for (const parameter of operation.parameters ?? [])
          walk(parameter.schema, `${method} ${path} ${parameter.name}`, new Set());
    expect(unbounded).toEqual([]);
    const turn = document.components.schemas.JpTurnRequest?.properties;
    expect(turn?.model?.properties?.id?.maxLength).toBe(256);
  });

  it("lists at most 100 errors and counts the rest (400,000 bad events answered 29 MB)", async () => {
    const h = harness();
    const response = await h.request("POST", TURNS, {
      turn: 0,
      events: Array.from({ length: 400_000 }, () => 0),
    });
    expect(response.status).toBe(400);
    const text = await response.clone().text();
    expect(text.length).toBeLessThan(10_000);
    const body = await problem(response);
    expect(body).toMatchObject({
      type: "/problems/invalid-request",
      status: 400,
      detail: "events[0]: entry must be a JSON object (and 399999 more)",
      errors_omitted: 399_900,
    });
    expect(body.errors).toHaveLength(100);
    expect((body.errors as unknown[])[99]).toEqual({
      pointer: "/events/99",
      detail: "entry must be a JSON object",
    });
  });

  it("names unknown keys one by one, at most 100 of them, in the turn, the rule and the config", async () => {
    const h = harness();
    const extra = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 1]));
    const turn = await problem(
      await h.request("POST", TURNS, { turn: 0, events: oneTurn, ...extra }),
    );
    expect(turn).toMatchObject({
      detail:
        "the turn is invalid: /k0: unknown key (known: turn, model, usage, events) (and 999 more)",
      errors_omitted: 900,
    });
    expect((turn.errors as unknown[])[1]).toEqual({
      pointer: "/k1",
      detail: "unknown key (known: turn, model, usage, events)",
    });
    expect(turn.errors).toHaveLength(100);

    expect((await h.request("POST", TURNS, { turn: 0, events: oneTurn })).status).toBe(202);
    const rule = await problem(
      await h.request("POST", "/v1/conversations/c/compactions", { rule: extra }),
    );
    const known = "keep_first, keep_last, reasoning, tool_calls, summary";
    expect(rule.detail).toBe(
      `${Array.from({ length: 100 }, (_, i) => `rule.k${i}: unknown key (known: ${known})`).join("; ")} (and 900 more)`,
    );
    expect(rule.errors).toHaveLength(100);
    expect(rule.errors_omitted).toBe(900);

    const config = await problem(
      await h.request("PUT", "/v1/conversations/c/config", {
        conversation: { compaction: { auto: extra } },
      }),
    );
    expect(config.detail).toMatch(/^conversation\.compaction\.auto\.k0: unknown key /);
    expect(config.detail).toMatch(/; conversation\.compaction\.auto\.k99: [^;]+ \(and 900 more\)$/);
    expect(config.errors).toHaveLength(100);
    expect(config.errors_omitted).toBe(900);
  });

  it("documents the cap and the count of left-out errors in the Problem schema", async () => {
    const problemSchema = (await openapi()).components.schemas.Problem as Schema & {
      properties: Record<string, Schema & { maxItems?: number }>;
    };
    expect(problemSchema.properties.errors?.maxItems).toBe(100);
    expect(problemSchema.properties.errors_omitted?.type).toBe("integer");
  });
});

describe("HTTP edge cases", () => {
  const json = { "content-type": "application/json" };
  const body = JSON.stringify({ turn: 0, events: oneTurn });

  it("checks the API key before the body's size and type, and every 401 carries WWW-Authenticate", async () => {
    const h = harness({ bodyLimitBytes: 1000 });
    const big = JSON.stringify({ turn: 0, events: oneTurn, pad: "x".repeat(5000) });
    const cases: [string, Record<string, string>, string | Uint8Array, string][] = [
      ["oversized, no key", json, big, 'Bearer realm="autocompact"'],
      [
        "oversized, unknown key",
        { ...json, authorization: "Bearer nope" },
        big,
        'Bearer realm="autocompact", error="invalid_token"',
      ],
      ["not JSON, no key", { "content-type": "text/plain" }, body, 'Bearer realm="autocompact"'],
      [
        "gzip, no key",
        { ...json, "content-encoding": "gzip" },
        gzipSync(body),
        'Bearer realm="autocompact"',
      ],
      [
        "malformed header",
        { ...json, authorization: "Basic abc" },
        body,
        'Bearer realm="autocompact", error="invalid_request"',
      ],
    ];
    for (const [label, headers, payload, challenge] of cases) {
      const response = await raw(h, payload, headers);
      expect([label, response.status]).toEqual([label, 401]);
      expect([label, response.headers.get("www-authenticate")]).toEqual([label, challenge]);
      expect((await problem(response)).type).toBe("/problems/unauthorized");
    }
    // Authenticated, the same requests answer 413 and 415.
    const auth = { authorization: `Bearer ${ALICE_KEY}` };
    expect((await raw(h, big, { ...json, ...auth })).status).toBe(413);
    expect((await raw(h, body, { "content-type": "text/plain", ...auth })).status).toBe(415);
    const document = (await (await h.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item))
        if (operation.responses["401"])
          expect(Object.keys(operation.responses["401"].headers ?? {})).toEqual([
            "WWW-Authenticate",
          ]);
  });

  it("answers a missing webhook signature's 401 with a WWW-Authenticate challenge too", async () => {
    const secret = `whsec_${Buffer.from("super secret signing key").toString("base64")}`;
    const h = harness({
      tenants: [{ id: "signed", key_hashes: [hashApiKey("ak_signed")], webhook_secrets: [secret] }],
    });
    const response = await raw(h, body, { ...json, authorization: "Bearer ak_signed" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="autocompact"');
    expect((await problem(response)).type).toBe("/problems/invalid-signature");
  });

  it("answers 415 to a content-encoded body, saying to send identity-encoded JSON", async () => {
    const h = harness();
    const auth = { authorization: `Bearer ${ALICE_KEY}` };
    for (const [encoding, payload] of [
      ["gzip", gzipSync(body)],
      ["br", body],
      ["identity, gzip", gzipSync(body)],
    ] as const) {
      const response = await raw(h, payload, { ...json, ...auth, "content-encoding": encoding });
      expect(response.status).toBe(415);
      expect(await problem(response)).toEqual({
        type: "/problems/unsupported-media-type",
        title: "Send JSON",
        status: 415,
        detail: `the body is sent with \`content-encoding: ${encoding}\`: send it uncompressed (identity-encoded JSON, no content-encoding header)`,
      });
    }
    const identity = await raw(h, body, { ...json, ...auth, "content-encoding": "identity" });
    expect(identity.status).toBe(202);
  });

  it("answers 400 to a body that is not valid UTF-8 rather than storing replacement characters", async () => {
    const h = harness();
    const auth = { authorization: `Bearer ${ALICE_KEY}` };
    const [head, tail] = JSON.stringify({
      turn: 0,
      events: [
        { type: "turn_start", timestamp: at },
        { type: "chat_request", timestamp: at, content: "a@b" },
      ],
    }).split("@") as [string, string];
    const encoder = new TextEncoder();
    const invalid = new Uint8Array([...encoder.encode(head), 0xff, 0xfe, ...encoder.encode(tail)]);
    for (const path of [TURNS, "/v1/conversations/c/compactions", "/v1/conversations/c/config"]) {
      const response = await h.app.request(path, {
        method: path.endsWith("config") ? "PUT" : "POST",
        headers: { ...json, ...auth },
        body: invalid,
      });
      expect([path, response.status]).toEqual([path, 400]);
      expect(await problem(response)).toEqual({
        type: "/problems/invalid-request",
        title: "Invalid request",
        status: 400,
        detail: "the request body is not valid UTF-8: send JSON encoded as UTF-8",
      });
    }
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);
  });

  it("caps a turn's config_delta issues like every other list: 100 located, the rest counted", async () => {
    const h = harness();
    const auto = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`bogus_${i}`, 1]));
    const response = await h.request("POST", TURNS, {
      turn: 0,
      events: [
        { type: "config_delta", timestamp: at, delta: { conversation: { compaction: { auto } } } },
        ...oneTurn,
      ],
    });
    expect(response.status).toBe(400);
    const body = (await problem(response)) as {
      type: string;
      detail: string;
      errors: { pointer: string; detail: string }[];
      errors_omitted: number;
    };
    expect(body.type).toBe("/problems/invalid-turn");
    expect(body.errors).toHaveLength(100);
    expect(body.errors_omitted).toBe(50);
    expect(body.errors[0]?.pointer).toBe("/events/0/delta");
    expect(body.errors[0]?.detail).toMatch(/^conversation\.compaction\.auto\.bogus_0: unknown key/);
    expect(body.detail).toMatch(
      /^events\[0\]\.delta: conversation\.compaction\.auto\.bogus_0: unknown key/,
    );
    expect(body.detail).toMatch(/ \(and 50 more\)$/);
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);
  });
});
