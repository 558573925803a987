/**
 * `client.tenant` (client/tenant.ts) against the real app (the test
 * harness, called in process): the tenant's default config layer and its
 * models, the requests sent for them, and the errors a caller sees.
 */
import { describe, expect, it } from "vitest";
import { AutocompactClient, ServiceError } from "../../client/index.ts";
import { messageTurn } from "../helpers/builders.ts";
import { ALICE_KEY, BOB_KEY, harness } from "../helpers/service.ts";

const URL_BASE = "http://autocompact.test";
const on = { conversation: { compaction: { auto: { enabled: true, min_turns: 2 } } } };
const empty = { conversation: { compaction: { auto: {} } } };

/** A client per key of one fresh harness, recording what each sends. */
function setup() {
  const h = harness();
  const sent: { method: string; url: string; body: string | undefined }[] = [];
  const client = (key: string) =>
    new AutocompactClient({
      url: URL_BASE,
      key,
      fetch: async (input, init) => {
        sent.push({ method: init.method ?? "GET", url: input, body: init.body as string });
        return h.app.request(input, init);
      },
    });
  return { alice: client(ALICE_KEY), bob: client(BOB_KEY), sent };
}

describe("client.tenant", () => {
  it("reads and sets the tenant's default layer, which its conversations start from", async () => {
    const { alice, bob, sent } = setup();
    expect(await alice.tenant.getConfig()).toMatchObject({
      ...empty,
      effective: { enabled: false, trigger_ratio: 0.75, min_turns: 5 },
    });
    expect(await alice.tenant.putConfig(on)).toMatchObject({
      ...on,
      effective: { enabled: true, trigger_ratio: 0.75, min_turns: 2 },
    });
    expect(sent.map((s) => [s.method, s.url, s.body])).toEqual([
      ["GET", `${URL_BASE}/v1/tenant/config`, undefined],
      ["PUT", `${URL_BASE}/v1/tenant/config`, JSON.stringify(on)],
    ]);
    // A conversation without a layer of its own runs the tenant's, and says nothing is off.
    expect(await alice.getConfig("c1")).toMatchObject({ ...empty, effective: { enabled: true } });
    const posted = await alice.postTurn("c1", {
      turn: 0,
      model: { id: "m", context_window: 100_000 },
      events: messageTurn(0),
    });
    expect(posted.warnings).toEqual([]);
    // Another tenant's layer is its own.
    expect(await bob.tenant.getConfig()).toMatchObject({ ...empty, effective: { enabled: false } });
    expect(await alice.tenant.putConfig(empty)).toMatchObject({ effective: { enabled: false } });
    expect(await alice.getConfig("c1")).toMatchObject({ effective: { enabled: false } });
  });

  it("reads and sets the tenant's models, sent as {models}", async () => {
    const { alice, bob, sent } = setup();
    expect(await alice.tenant.getModels()).toEqual({ models: {} });
    expect(await alice.tenant.putModels({ "acme-coder-1": 64_000 })).toEqual({
      models: { "acme-coder-1": 64_000 },
    });
    expect(sent.at(-1)).toEqual({
      method: "PUT",
      url: `${URL_BASE}/v1/tenant/models`,
      body: '{"models":{"acme-coder-1":64000}}',
    });
    expect(await alice.tenant.getModels()).toEqual({ models: { "acme-coder-1": 64_000 } });
    expect(await bob.tenant.getModels()).toEqual({ models: {} });
    // The model's window is the tenant's now: the list reads it.
    await alice.postTurn("c1", { turn: 0, model: { id: "acme-coder-1" }, events: messageTurn(0) });
    const listed = await alice.listConversations();
    expect(listed.conversations.map((c) => [c.id, c.context_window])).toEqual([["c1", 64_000]]);
    expect(await alice.tenant.putModels({})).toEqual({ models: {} });
  });

  it("throws the service's problem for a bad layer or a bad window, storing nothing", async () => {
    const { alice } = setup();
    const ratio = await alice.tenant
      .putConfig({ conversation: { compaction: { auto: { trigger_ratio: 3 } } } })
      .catch((error: unknown) => error);
    expect(ratio).toBeInstanceOf(ServiceError);
    expect(ratio).toMatchObject({
      status: 400,
      message:
        "PUT /v1/tenant/config: 400 conversation.compaction.auto.trigger_ratio: must be at most 1",
    });
    const window = await alice.tenant
      .putModels({ "acme-coder-1": 0 })
      .catch((error: unknown) => error);
    expect(window).toBeInstanceOf(ServiceError);
    expect((window as ServiceError).status).toBe(400);
    expect((window as ServiceError).problem?.errors).toEqual([
      { pointer: "/models/acme-coder-1", detail: expect.stringContaining("at least 1 token") },
    ]);
    expect(await alice.tenant.getConfig()).toMatchObject(empty);
    expect(await alice.tenant.getModels()).toEqual({ models: {} });
  });

  it("asks with the client's key: an unknown one is a 401", async () => {
    const h = harness();
    const stranger = new AutocompactClient({
      url: URL_BASE,
      key: "ak_nobody",
      fetch: (input, init) => Promise.resolve(h.app.request(input, init)),
    });
    await expect(stranger.tenant.getModels()).rejects.toMatchObject({ status: 401 });
  });
});
