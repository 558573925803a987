/**
 * Writes that keep losing races: the conversation log retries them with a
 * jittered backoff for a few seconds, then the API answers 503 with
 * Retry-After and logs a warning, not an unexpected error.
 */
import { describe, expect, it, vi } from "vitest";
import { serverErrorLogger } from "../../functions/api/app.ts";
import { ConditionFailedError } from "../../functions/errors.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { message, request, turnStart } from "../helpers/builders.ts";
import { harness } from "../helpers/service.ts";

const turn = (n: number) => ({
  turn: n,
  model: { id: "test-model", context_window: 100_000 },
  events: [...(n > 0 ? [turnStart(n)] : []), request(`q${n}`, n), message(`a${n}`, n)],
});

describe("contention", () => {
  it("retries a lost race until it lands: concurrent manual compactions all succeed", async () => {
    const store = new MemoryConversationStore();
    const addCompaction = store.addCompaction.bind(store);
    let losses = 3;
    vi.spyOn(store, "addCompaction").mockImplementation(async (...args) => {
      if (losses-- > 0) throw new ConditionFailedError("a concurrent write won");
      return addCompaction(...args);
    });
    const h = harness({ store, retry: { sleep: async () => {} } });
    for (let n = 0; n < 4; n++)
      expect((await h.request("POST", "/v1/conversations/c/turns", turn(n))).status).toBe(202);
    const made = await h.request("POST", "/v1/conversations/c/compactions", { spec: "r:1..2" });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({ position: 1, from_turn: 1, to_turn: 2 });
  });

  it("answers 503 with Retry-After once the retry budget is spent, and logs a warning", async () => {
    const store = new MemoryConversationStore();
    vi.spyOn(store, "removeCompactions").mockRejectedValue(new ConditionFailedError("lost"));
    const logger = { error: vi.fn(), warn: vi.fn() };
    let clock = 0;
    const h = harness({
      store,
      retry: { budgetMs: 3_000, sleep: async () => {}, now: () => (clock += 500) },
      onServerError: serverErrorLogger(logger),
    });
    for (let n = 0; n < 4; n++) await h.request("POST", "/v1/conversations/c/turns", turn(n));
    expect(
      (await h.request("POST", "/v1/conversations/c/compactions", { spec: "r:1..2" })).status,
    ).toBe(201);

    const reset = await h.request("DELETE", "/v1/conversations/c/compactions");
    expect(reset.status).toBe(503);
    expect(reset.headers.get("retry-after")).toBe("1");
    expect(reset.headers.get("content-type")).toBe("application/problem+json");
    expect(await reset.json()).toEqual({
      type: "/problems/contention",
      title: "Too many concurrent writes",
      status: 503,
      detail: "reset: too many concurrent writes, retry the request",
    });
    // Started at 500; losses at 1,000 … 3,500: six attempts before 3,000 ms had passed.
    expect(store.removeCompactions).toHaveBeenCalledTimes(6);
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledWith("api.contention", {
      method: "DELETE",
      path: "/v1/conversations/c/compactions",
      status: 503,
      detail: "reset: too many concurrent writes, retry the request",
    });
  });

  it("logs an unexpected fault at ERROR with the error, and never shows its message", async () => {
    const store = new MemoryConversationStore();
    const fault = new Error("table on fire");
    vi.spyOn(store, "listCompactions").mockRejectedValue(fault);
    const logger = { error: vi.fn(), warn: vi.fn() };
    const h = harness({ store, onServerError: serverErrorLogger(logger) });
    await h.request("POST", "/v1/conversations/c/turns", turn(0));
    const answer = await h.request("GET", "/v1/conversations/c/compactions");
    expect(answer.status).toBe(500);
    expect(JSON.stringify(await answer.json())).not.toContain("fire");
    expect(logger.warn).not.toHaveBeenCalled();
    expect(logger.error).toHaveBeenCalledWith("api.unexpected_error", {
      error: fault,
      method: "GET",
      path: "/v1/conversations/c/compactions",
    });
  });
});
