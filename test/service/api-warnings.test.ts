/**
 * Warnings where a platform looks (issue 31): the turn post's answer, `GET
 * /v1/conversations/{id}`, the projection in every format and the list carry
 * `warnings` (empty when none). Details are literals, their numbers worked
 * by hand from the turns' bytes (a turn below is 10 + 9 + 13 + size + 8
 * bytes: question, tool name, arguments, tool result, answer; over 4).
 */
import { describe, expect, it } from "vitest";
import { FORMAT_NAMES } from "../../core/formats/index.ts";
import { chatToolTurn } from "../helpers/format-samples.ts";
import { harness } from "../helpers/service.ts";
import { NO_MODEL_WARNING, offWarning } from "../helpers/warnings.ts";

const TURNS = "/v1/conversations/c/turns";

type Harness = ReturnType<typeof harness>;

const post = (h: Harness, turn: number, model: object, size = 4_400, query = "") =>
  h.request("POST", `${TURNS}${query}`, {
    turn,
    model,
    format: "openai-chat",
    messages: chatToolTurn(turn, size),
  });

async function json(response: Response): Promise<Record<string, unknown>> {
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

const read = async (h: Harness, path: string) =>
  (await json(await h.request("GET", `/v1/conversations/c${path}`))).warnings;

async function deliver(h: Harness) {
  for (const message of h.queue.take()) await h.evaluate(message);
}

const OFF = offWarning("c");
const UNKNOWN_MY_MODEL = {
  code: "context_window_unknown",
  detail:
    'the context window of model "my-model" is unknown, so automatic compaction cannot fire: post each turn with `model.context_window` (the window in tokens), or add the model to the service\'s catalog (`MODEL_CATALOG`, e.g. {"my-model":128000})',
};

describe("warnings", () => {
  it("name the layer that turned compaction off: the service's, the tenant's over it, the conversation's over both", async () => {
    const h = harness({ settings: { config: { enabled: false } } });
    await post(h, 0, { id: "my-model" });
    const detail = async () => ((await read(h, "")) as { detail: string }[])[0]?.detail;
    expect(await detail()).toMatch(
      /^automatic compaction is off \(the service's config turns it off\): /,
    );
    const tenantOff = { conversation: { compaction: { auto: { enabled: false } } } };
    expect((await h.request("PUT", "/v1/tenant/config", tenantOff)).status).toBe(200);
    expect(await detail()).toMatch(
      /^automatic compaction is off \(the tenant's config turns it off\): /,
    );
    expect((await h.request("PUT", "/v1/conversations/c/config", tenantOff)).status).toBe(200);
    expect(await detail()).toMatch(
      /^automatic compaction is off \(the conversation's config turns it off\): /,
    );
  });

  it("are on the post's answer, the summary, every projection format and the list", async () => {
    const h = harness();
    expect((await json(await post(h, 0, { id: "my-model" }))).warnings).toEqual([
      OFF,
      UNKNOWN_MY_MODEL,
    ]);
    expect(await read(h, "")).toEqual([OFF, UNKNOWN_MY_MODEL]);
    for (const format of FORMAT_NAMES) {
      expect(await read(h, `/projection?format=${format}`)).toEqual([OFF, UNKNOWN_MY_MODEL]);
    }
    // The raw stream is no answer about the state: it carries none.
    expect(await read(h, "/events")).toBeUndefined();
    const list = await json(await h.request("GET", "/v1/conversations"));
    expect(list.conversations).toMatchObject([{ id: "c", warnings: [OFF, UNKNOWN_MY_MODEL] }]);
  });

  it("auto_disabled names a call that enables compaction, keeping the conversation's layer", async () => {
    const h = harness();
    const layer = { conversation: { compaction: { auto: { trigger_ratio: 0.5 } } } };
    expect((await h.request("PUT", "/v1/conversations/c/config", layer)).status).toBe(200);
    const [warning] = (await json(await post(h, 0, { context_window: 2_000 }))).warnings as {
      detail: string;
    }[];
    expect(warning?.detail).toBe(
      'automatic compaction is off (the default): enable it with PUT /v1/conversations/c/config {"conversation":{"compaction":{"auto":{"trigger_ratio":0.5,"enabled":true}}}}',
    );
    // Made as it is said, the call enables it and keeps the ratio: no warning is left.
    const [, method, path, body] = /with (PUT) (\S+) (.*)$/.exec(warning?.detail ?? "") ?? [];
    const put = await json(await h.request(method ?? "", path ?? "", JSON.parse(body ?? "")));
    expect(put.effective).toMatchObject({ enabled: true, trigger_ratio: 0.5 });
    expect(await read(h, "")).toEqual([]);
  });

  it("context_window_unknown is gone once the catalog knows the model", async () => {
    const known = harness({ settings: { catalog: { "my-model": 200_000 } } });
    expect((await json(await post(known, 0, { id: "my-model" }))).warnings).toEqual([OFF]);
    const unnamed = harness();
    expect((await json(await post(unnamed, 0, {}))).warnings).toEqual([OFF, NO_MODEL_WARNING]);
  });

  it("over_window counts the reserve: 1,110 tokens plus 1,000 are past a 2,000-token window", async () => {
    const h = harness();
    const auto = { enabled: true, reserve_tokens: 1_000 };
    await h.request("PUT", "/v1/conversations/c/config", {
      conversation: { compaction: { auto } },
    });
    // 4,440 bytes: 1,110 tokens.
    expect((await json(await post(h, 0, { context_window: 2_000 }))).warnings).toEqual([
      {
        code: "over_window",
        detail:
          "the view is 2110 tokens (estimate 1110 plus reserve 1000), past the 2000-token context window: the next call may be refused or truncated; compact it now (POST …/compactions) or keep fewer turns (`rule.keep_last`)",
      },
    ]);
  });

  it("still_over_threshold follows a band that left the view over, until a reset removes the band", async () => {
    const h = harness();
    const auto = {
      enabled: true,
      trigger_ratio: 0.5,
      min_turns: 1,
      rule: { keep_first: 0, keep_last: 1, tool_calls: "strip" },
    };
    await h.request("PUT", "/v1/conversations/c/config", {
      conversation: { compaction: { auto } },
    });
    await post(h, 0, { context_window: 2_000 });
    await deliver(h);
    const posted = post(h, 1, { context_window: 2_000 }, 4_400, "?wait=5");
    await new Promise((resolve) => setTimeout(resolve, 120));
    await deliver(h);
    // The band strips turn 0 to 60 bytes (question 10, `read_file` 9 with arguments `{}` 2,
    // "[compacted] read_file: success" 31, answer 8); turn 1 keeps its 4,440: 4,500 / 4 = 1,125.
    const still = {
      code: "still_over_threshold",
      detail:
        "the last automatic band left the view at 1125 tokens (estimate 1125 plus reserve 0), over the threshold of 1000 (trigger_ratio 0.5 of the window): the rule keeps too much; lower `rule.keep_last`, strip or summarize more",
    };
    const answer = await json(await posted);
    expect(answer.decision).toMatchObject({ outcome: "fired" });
    expect(answer.warnings).toEqual([still]);
    expect(await read(h, "")).toEqual([still]);
    expect(await read(h, "/projection?format=anthropic-messages")).toEqual([still]);
    // Reset, no band stands: the two raw turns' 8,880 bytes are 2,220 tokens, past the window.
    expect((await h.request("DELETE", "/v1/conversations/c/compactions")).status).toBe(200);
    expect(await read(h, "")).toEqual([
      {
        code: "over_window",
        detail:
          "the view is 2220 tokens (estimate 2220 plus reserve 0), past the 2000-token context window: the next call may be refused or truncated; compact it now (POST …/compactions) or keep fewer turns (`rule.keep_last`)",
      },
    ]);
  });

  it("are declared in the OpenAPI document, on each answer that carries them", async () => {
    const h = harness();
    const document = (await json(await h.request("GET", "/v1/openapi.json"))) as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const { schemas } = document.components;
    expect(schemas.Warning).toMatchObject({
      properties: {
        code: {
          type: "string",
          enum: ["auto_disabled", "context_window_unknown", "over_window", "still_over_threshold"],
        },
        detail: { type: "string" },
      },
    });
    for (const answer of ["AppendOutcome", "ConversationSummary", "Projection"]) {
      expect(schemas[answer]?.properties?.warnings, answer).toMatchObject({
        type: "array",
        items: { $ref: "#/components/schemas/Warning" },
      });
    }
  });
});
