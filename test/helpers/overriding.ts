/** Fault injection on a store port without a mocking library. */
import type { ConversationStore } from "../../functions/ports.ts";

/** A store that delegates to `inner` except for the given methods. */
export function overriding(
  inner: ConversationStore,
  overrides: Partial<ConversationStore>,
): ConversationStore {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property in overrides) return overrides[property as keyof ConversationStore];
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
