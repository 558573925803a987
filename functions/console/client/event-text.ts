/** What the console's reader shows of a JP event (docs/architecture.md §4). */
import type { JpEvent } from "../../../client/index.ts";

/** An event's readable text. */
export function eventText(event: JpEvent): string {
  const pick = (value: unknown) =>
    typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
  switch (event.type) {
    case "chat_request":
      return pick(event.content);
    case "chat_response":
      // Exactly one of message, reasoning, data.
      return event.reasoning === undefined
        ? pick(event.message ?? event.data)
        : `(reasoning) ${pick(event.reasoning)}`;
    case "tool_call_request":
      return `${pick(event.name)}(${pick(event.arguments)})`;
    case "tool_call_response":
      return pick(event.content ?? event.result ?? event.error);
    default:
      return pick(event.content ?? event.question ?? event.answer ?? event.delta);
  }
}
