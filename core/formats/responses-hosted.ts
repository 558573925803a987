/**
 * The Responses API's hosted and built-in tool items (docs/architecture.md
 * §15 "Hosted tools"): every `input` item type of the pinned SDK's
 * `ResponseInputItem` besides messages, reasoning and function calls.
 *
 * | item | kind | JP events (`id`) |
 * |---|---|---|
 * | `web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_list_tools`, `compaction` | whole: the call and its result in one item | `tool_call_request` + `tool_call_response` (`id`) |
 * | `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`, `custom_tool_call`, `tool_search_call`, `mcp_approval_request` | call | `tool_call_request` (`call_id`; `id` for `mcp_approval_request`) |
 * | `computer_call_output`, `local_shell_call_output`, `shell_call_output`, `apply_patch_call_output`, `custom_tool_call_output`, `tool_search_output`, `mcp_approval_response` | output | `tool_call_response` (`call_id`; `id` for `local_shell_call_output`, `approval_request_id` for `mcp_approval_response`) |
 *
 * The request's `name` is the tool's (`web_search`, `computer`, …; an MCP or
 * custom tool's own `name`), its `arguments` the item's fields but `type`,
 * ids, `status` and the result fields; the response's `content` is the
 * result fields' text (one string as it is, else JSON; a generated image is
 * `[generated image]`, its base64 staying in the item), `is_error` true for a
 * `failed` status or an `error`. The item itself rides verbatim under
 * `metadata["openai-responses"].hosted` on the event it maps to (the call's,
 * for a whole item, whose result event carries `hosted: true`). An item
 * without the id it pairs by (a `tool_search_call` without `call_id`) is
 * taken whole, under its `id` or `<type>:<timestamp>:<index>`.
 */
import * as z from "zod";
import type { ToolCallRequest, ToolCallResponse } from "../events.ts";
import { hostedOf, hostedText, payloadText, verbatimHosted } from "./hosted.ts";
import type { MessagePath } from "./issues.ts";
import { formatMetadata, isJsonObject, type Json, refuseNonFinite, without } from "./shared.ts";
import type { ProviderView, ViewEvent } from "./view.ts";

const NAME = "openai-responses";

/** How one item type maps to JP events. */
interface Spec {
  readonly kind: "whole" | "call" | "output";
  /** The fields the item pairs by, the first present one (whole items: `id`). */
  readonly ids: readonly string[];
  /** The tool's name; `undefined`: the item's own `name`. */
  readonly name?: string;
  /** The fields holding the result. */
  readonly result: readonly string[];
}

const whole = (name: string | undefined, result: readonly string[]): Spec => ({
  kind: "whole",
  ids: ["id"],
  ...(name !== undefined && { name }),
  result,
});
const call = (name: string | undefined, ids = ["call_id"]): Spec => ({
  kind: "call",
  ids,
  ...(name !== undefined && { name }),
  result: [],
});
const output = (result: readonly string[], ids = ["call_id"]): Spec => ({
  kind: "output",
  ids,
  result,
});

const SPECS: Readonly<Record<string, Spec>> = {
  web_search_call: whole("web_search", []),
  file_search_call: whole("file_search", ["results"]),
  code_interpreter_call: whole("code_interpreter", ["outputs"]),
  image_generation_call: whole("image_generation", ["result"]),
  mcp_call: whole(undefined, ["output", "error"]),
  mcp_list_tools: whole("mcp_list_tools", ["tools", "error"]),
  compaction: whole("compaction", ["encrypted_content"]),
  computer_call: call("computer"),
  computer_call_output: output(["output"]),
  local_shell_call: call("local_shell"),
  // The SDK types the call's id as `id`, OpenAI's published schema as `call_id`.
  local_shell_call_output: output(["output"], ["call_id", "id"]),
  shell_call: call("shell"),
  shell_call_output: output(["output"]),
  apply_patch_call: call("apply_patch"),
  apply_patch_call_output: output(["output"]),
  custom_tool_call: call(undefined),
  custom_tool_call_output: output(["output"]),
  tool_search_call: call("tool_search"),
  tool_search_output: output(["tools"]),
  mcp_approval_request: call(undefined, ["id"]),
  mcp_approval_response: output(["approve", "reason"], ["approval_request_id"]),
};

/** The hosted item types, each carried verbatim. */
export const HOSTED_ITEM_TYPES: readonly string[] = Object.keys(SPECS);

/** A hosted item type. */
export function isHostedItemType(type: unknown): boolean {
  return typeof type === "string" && Object.hasOwn(SPECS, type);
}

const optionalId = z.string().min(1).nullable().optional();
/** The types whose pairing id the SDK makes optional. */
const MAY_LACK_ID: ReadonlySet<string> = new Set([
  "tool_search_call",
  "tool_search_output",
  "compaction",
]);

/** What the service checks of a hosted item of `type`: the fields it reads (the rest is the API's). */
export function hostedItemSchema(type: string): z.ZodType {
  const spec = SPECS[type] as Spec;
  const named =
    spec.name === undefined && spec.kind !== "output" ? { name: z.string().min(1) } : {};
  // Only the fields the events are made of are checked; an item may lack its ids where the SDK says so.
  const [first, ...others] = spec.ids as [string, ...string[]];
  const mayLackId = MAY_LACK_ID.has(type) || others.length > 0;
  return z.looseObject({
    type: z.literal(type),
    [first]: mayLackId ? optionalId : z.string().min(1),
    ...Object.fromEntries(others.map((field) => [field, optionalId])),
    ...named,
  });
}

const meta = formatMetadata<{ hosted: Json | true }>(NAME);

/** The text of an item's result fields. */
function resultText(type: string, item: Json, fields: readonly string[]): string {
  if (type === "image_generation_call") return item.result ? "[generated image]" : "";
  const present = fields.filter((field) => item[field] !== undefined && item[field] !== null);
  if (present.length === 1) return payloadText(item[present[0] as string]);
  return present.length === 0
    ? ""
    : JSON.stringify(Object.fromEntries(present.map((f) => [f, item[f]])));
}

/** Whether an item reports a failure. */
function failed(item: Json): boolean {
  return item.status === "failed" || (typeof item.error === "string" && item.error !== "");
}

/** How an item pairs: its kind, and the id its events take (`undefined`: it has none, one is made up). */
function pairing(item: Json & { type: string }): { kind: Spec["kind"]; id: string | undefined } {
  const spec = SPECS[item.type] as Spec;
  const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";
  const own = spec.ids.map((field) => item[field]).find(nonEmpty);
  if (own !== undefined) return { kind: spec.kind, id: own };
  return { kind: "whole", id: nonEmpty(item.id) ? item.id : undefined };
}

/**
 * The JP events of a hosted item (`item` as posted: it is kept verbatim), the
 * `index`-th of a turn stamped `timestamp`.
 */
export function hostedItemEvents(
  item: Json & { type: string },
  timestamp: string,
  at: MessagePath,
): (ToolCallRequest | ToolCallResponse)[] {
  const spec = SPECS[item.type] as Spec;
  const { kind, id: own } = pairing(item);
  const id = own ?? `${item.type}:${timestamp}:${at.at(-1)}`;
  // An MCP or custom tool's item names its tool; an output taken whole (it lacks its id) has no
  // tool name to take, so its own `name` or its type.
  const name = spec.name ?? (typeof item.name === "string" ? item.name : item.type);
  const request = (): ToolCallRequest => {
    const args = without(item, ["type", "id", ...spec.ids, "status", ...spec.result]);
    refuseNonFinite(args, at);
    return meta.write(
      { type: "tool_call_request", timestamp, id, name, arguments: args },
      { hosted: item },
    );
  };
  const response = (hosted: Json | true): ToolCallResponse =>
    meta.write(
      {
        type: "tool_call_response",
        timestamp,
        id,
        content: resultText(item.type, item, spec.result),
        is_error: failed(item),
      },
      { hosted },
    );
  if (kind === "whole") return [request(), response(true)];
  return kind === "call" ? [request()] : [response(item)];
}

/** The events a stored item of `hosted` stands for still match `viewEvent`: same id, same kind. */
function matches(viewEvent: ViewEvent, hosted: Json | true): boolean {
  const event = viewEvent.event as ToolCallRequest | ToolCallResponse;
  if (hosted === true) return event.type === "tool_call_response";
  if (!isJsonObject(hosted) || !isHostedItemType(hosted.type)) return false;
  if (!hostedItemSchema(hosted.type as string).safeParse(hosted).success) return false;
  const { kind, id } = pairing(hosted as Json & { type: string });
  // A whole item rides on its call; a call or an output on its own event. A made-up id matches any.
  const type = kind === "output" ? "tool_call_response" : "tool_call_request";
  return (id === undefined || id === event.id) && type === event.type;
}

/** How a view's hosted events are written as Responses items. */
export interface HostedItems {
  /** The items a view event is written as when it is hosted (its own item, none, or a text message), else `undefined`. */
  itemsOf(viewEvent: ViewEvent): Json[] | undefined;
}

/**
 * The writer of `view`'s hosted events: verbatim while every event of the
 * id is intact and in a turn whose reasoning is kept (a stripped turn's
 * items lose their ids, and these items need theirs), else assistant text.
 */
export function hostedItems(view: ProviderView): HostedItems {
  const verbatim = verbatimHosted(
    view,
    NAME,
    (viewEvent, hosted, turn) => !turn.reasoningStripped && matches(viewEvent, hosted),
  );
  return {
    itemsOf(viewEvent) {
      const hosted = hostedOf(viewEvent.event);
      if (hosted === undefined) return undefined;
      const event = viewEvent.event as ToolCallRequest | ToolCallResponse;
      // Only this format's events are ever verbatim (verbatimHosted keeps those of NAME).
      if (verbatim.has(viewEvent)) {
        return hosted.hosted === true ? [] : [hosted.hosted];
      }
      return [{ role: "assistant", content: hostedText(event) }];
    },
  };
}
