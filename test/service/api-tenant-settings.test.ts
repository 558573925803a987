/**
 * A tenant's own settings through `app.request()` (issues 31 and 27): its
 * default config layer (`/v1/tenant/config`), between the service's and a
 * conversation's, validated and located as a conversation's layer is; its
 * models (`/v1/tenant/models`), over the deployment's catalog, under a
 * turn's `model.context_window`, read by the list and by the evaluation.
 */
import { describe, expect, it } from "vitest";
import { layeredCatalog } from "../../core/catalog.ts";
import { messageTurn } from "../helpers/builders.ts";
import { BOB_KEY, harness } from "../helpers/service.ts";

const tree = (auto: Record<string, unknown>) => ({ conversation: { compaction: { auto } } });

describe("/v1/tenant/config", () => {
  it("is empty until set, then the layer every conversation starts from", async () => {
    const h = harness();
    expect(await (await h.request("GET", "/v1/tenant/config")).json()).toEqual({
      ...tree({}),
      effective: {
        enabled: false,
        trigger_ratio: 0.75,
        min_turns: 5,
        rule: {
          keep_first: 1,
          keep_last: 3,
          reasoning: "strip",
          tool_calls: "strip",
          summary: null,
        },
        estimator: "auto",
        reserve_tokens: 0,
        min_gain_tokens: 0,
        min_band_turns: 1,
        when: "turn",
        idle_seconds: 300,
        hard_ratio: 0.95,
      },
    });
    const put = await h.request("PUT", "/v1/tenant/config", tree({ enabled: true }));
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({
      ...tree({ enabled: true }),
      effective: { enabled: true },
    });
    expect(await (await h.request("GET", "/v1/tenant/config")).json()).toMatchObject({
      ...tree({ enabled: true }),
      effective: { enabled: true },
    });
    // A conversation that never set a layer runs the tenant's; another tenant's does not.
    expect(await (await h.request("GET", "/v1/conversations/c1/config")).json()).toMatchObject({
      ...tree({}),
      effective: { enabled: true },
    });
    const bobs = await h.request("GET", "/v1/conversations/c1/config", undefined, BOB_KEY);
    expect(await bobs.json()).toMatchObject({ effective: { enabled: false } });
    expect(
      await (await h.request("GET", "/v1/tenant/config", undefined, BOB_KEY)).json(),
    ).toMatchObject(tree({}));
    // Written empty, the layer is gone.
    await h.request("PUT", "/v1/tenant/config", tree({}));
    expect(await (await h.request("GET", "/v1/conversations/c1/config")).json()).toMatchObject({
      effective: { enabled: false },
    });
  });

  it("layers service defaults < tenant default < conversation config", async () => {
    const h = harness({
      settings: { config: { trigger_ratio: 0.6, min_turns: 2, reserve_tokens: 10 } },
    });
    await h.request(
      "PUT",
      "/v1/tenant/config",
      tree({ enabled: true, trigger_ratio: 0.5, min_turns: 4 }),
    );
    expect(await (await h.request("GET", "/v1/tenant/config")).json()).toMatchObject({
      effective: { enabled: true, trigger_ratio: 0.5, min_turns: 4, reserve_tokens: 10 },
    });
    await h.request("PUT", "/v1/conversations/c1/config", tree({ trigger_ratio: 0.9 }));
    expect(await (await h.request("GET", "/v1/conversations/c1/config")).json()).toEqual({
      ...tree({ trigger_ratio: 0.9 }),
      effective: expect.objectContaining({
        enabled: true,
        trigger_ratio: 0.9,
        min_turns: 4,
        reserve_tokens: 10,
      }),
    });
  });

  it("refuses a bad layer with the very problem a conversation's PUT answers, storing nothing", async () => {
    const h = harness();
    const bodies = [
      tree({ trigger_ratio: 3 }),
      tree({ enable: true }),
      tree({ rule: { reasoning: null, tool_calls: null } }),
      { enabled: true },
      { conversation: { compaction: {} } },
      "{",
      '{"conversation":{"compaction":{"auto":{"min_turns":1,"min_turns":2}}}}',
    ];
    for (const body of bodies) {
      const asTenant = await h.request("PUT", "/v1/tenant/config", body);
      const asConversation = await h.request("PUT", "/v1/conversations/c1/config", body);
      expect(asTenant.status).toBe(400);
      expect(await asTenant.json()).toEqual(await asConversation.json());
    }
    const ratio = await h.request("PUT", "/v1/tenant/config", tree({ trigger_ratio: 3 }));
    expect(await ratio.json()).toMatchObject({
      detail: "conversation.compaction.auto.trigger_ratio: must be at most 1",
    });
    const summary = await h.request("PUT", "/v1/tenant/config", tree({ rule: { summary: {} } }));
    expect(summary.status).toBe(422);
    expect(((await summary.json()) as { detail: string }).detail).toMatch(
      /no summarizer configured/,
    );
    expect(await (await h.request("GET", "/v1/tenant/config")).json()).toMatchObject(tree({}));
  });

  it("asks for the key first, and for JSON", async () => {
    const h = harness();
    expect((await h.app.request("/v1/tenant/config")).status).toBe(401);
    expect((await h.request("PUT", "/v1/tenant/config", tree({}), "ak_nobody")).status).toBe(401);
    const text = await h.request("PUT", "/v1/tenant/config", "{}", undefined, {
      "content-type": "text/plain",
    });
    expect(text.status).toBe(415);
  });
});

describe("/v1/tenant/models", () => {
  /** Posts turn `turn` of conversation `id` naming model `model`. */
  const postTurn = (
    h: ReturnType<typeof harness>,
    id: string,
    turn: number,
    model: Record<string, unknown>,
    key?: string,
  ) =>
    h.request(
      "POST",
      `/v1/conversations/${id}/turns`,
      { turn, model, events: messageTurn(turn) },
      key,
    );

  const windows = async (h: ReturnType<typeof harness>, key?: string) => {
    const listed = (await (await h.request("GET", "/v1/conversations", undefined, key)).json()) as {
      conversations: { id: string; context_window: number | null }[];
    };
    return Object.fromEntries(listed.conversations.map((c) => [c.id, c.context_window]));
  };

  it("are empty until set, then win over the deployment's, under model.context_window", async () => {
    const catalog = layeredCatalog({ "acme-coder-1": 32_000, "acme-coder-2": 16_000 });
    const h = harness({ settings: { catalog } });
    expect(await (await h.request("GET", "/v1/tenant/models")).json()).toEqual({ models: {} });
    const put = await h.request("PUT", "/v1/tenant/models", {
      models: { "acme-coder-1": 64_000, "acme-coder-3": 8_000 },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ models: { "acme-coder-1": 64_000, "acme-coder-3": 8_000 } });
    expect(await (await h.request("GET", "/v1/tenant/models")).json()).toEqual({
      models: { "acme-coder-1": 64_000, "acme-coder-3": 8_000 },
    });
    await postTurn(h, "one", 0, { id: "acme/acme-coder-1" });
    await postTurn(h, "two", 0, { id: "acme-coder-2" });
    await postTurn(h, "three", 0, { id: "ACME-CODER-3" });
    await postTurn(h, "own", 0, { id: "acme-coder-1", context_window: 1_000 });
    await postTurn(h, "bundled", 0, { id: "gpt-4.1" });
    expect(await windows(h)).toEqual({
      one: 64_000,
      two: 16_000,
      three: 8_000,
      own: 1_000,
      bundled: 1_047_576,
    });
    // Another tenant reads the deployment's catalog only.
    await postTurn(h, "one", 0, { id: "acme-coder-1" }, BOB_KEY);
    await postTurn(h, "three", 0, { id: "acme-coder-3" }, BOB_KEY);
    expect(await windows(h, BOB_KEY)).toEqual({ one: 32_000, three: null });
    await h.request("PUT", "/v1/tenant/models", { models: {} });
    expect(await (await h.request("GET", "/v1/tenant/models")).json()).toEqual({ models: {} });
  });

  it("are the window the evaluation reads for a model no catalog knows", async () => {
    const h = harness();
    await h.request("PUT", "/v1/tenant/config", tree({ enabled: true, min_turns: 0 }));
    await postTurn(h, "c1", 0, { id: "acme-coder-9" });
    const unknown = await h.evaluate({ tenant: "alice", conversation: "c1", turn: 0 });
    expect(unknown).toMatchObject({ outcome: "skipped", reason: "context_window_unknown" });
    await h.request("PUT", "/v1/tenant/models", { models: { "acme-coder-9": 100_000 } });
    await postTurn(h, "c1", 1, { id: "acme-coder-9" });
    const known = await h.evaluate({ tenant: "alice", conversation: "c1", turn: 1 });
    expect(known).toMatchObject({ outcome: "skipped", reason: "under_threshold" });
    expect(known).toMatchObject({ decision: { context_window: 100_000 } });
  });

  it("refuses bad models located by JSON pointer, storing nothing", async () => {
    const h = harness();
    const cases = [
      [{ models: { "acme-coder-1": 0 } }, "/models/acme-coder-1", "must be at least 1 token"],
      [
        { models: { "acme-coder-1": 1.5 } },
        "/models/acme-coder-1",
        "must be a whole number of tokens",
      ],
      [
        { models: { "acme-coder-1": "64k" } },
        "/models/acme-coder-1",
        "must be a context window in tokens",
      ],
      [{ models: { "acme-coder-1": 1 }, extra: true }, "/extra", "unknown key"],
    ] as const;
    for (const [body, pointer, message] of cases) {
      const refused = await h.request("PUT", "/v1/tenant/models", body);
      expect(refused.status).toBe(400);
      const problem = (await refused.json()) as { errors: { pointer: string; detail: string }[] };
      expect(problem.errors).toEqual([{ pointer, detail: expect.stringContaining(message) }]);
    }
    expect(await (await h.request("GET", "/v1/tenant/models")).json()).toEqual({ models: {} });
  });
});
