/** Builds DOM nodes without HTML strings (nothing the API answers is ever parsed as markup). */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | EventListener>;

/** An element with attributes (`on…` keys are listeners; `false`/undefined are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "object" ? child : String(child));
  }
  return element;
}

/**
 * A conversation's warnings as badges: each its code, its detail as the
 * title (docs/architecture.md §8, "Warnings"); `null` when there are none.
 */
export function warningBadges(
  warnings: readonly { readonly code: string; readonly detail: string }[],
): HTMLElement | null {
  if (warnings.length === 0) return null;
  return h(
    "span",
    { class: "warnings" },
    ...warnings.map((w) =>
      h("span", { class: "badge warning", title: w.detail, "data-warning": w.code }, w.code),
    ),
  );
}

/** A number of tokens, grouped by thousands. */
export function tokens(value: number | null | undefined): string {
  return value === null || value === undefined ? "unknown" : Math.round(value).toLocaleString("en");
}

/** The describing words of a band's policies: strip, omit, summary. */
export function policies(band: {
  readonly summary?: unknown;
  readonly reasoning?: string;
  readonly tool_calls?: { readonly policy: string };
}): string[] {
  const words: string[] = [];
  if (band.summary) words.push("summary");
  if (band.tool_calls) words.push(`tool calls ${band.tool_calls.policy}`);
  if (band.reasoning) words.push(`reasoning ${band.reasoning}`);
  return words;
}
