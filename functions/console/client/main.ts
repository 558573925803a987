/**
 * The console: sign in with an API key, the tenant's conversations, and one
 * conversation's size curve, bands, projected view and actions. Routing is
 * by the URL's hash (`#/c/<id>`), so the one page works under any prefix.
 */
import { connect, describe, forgetKey, isUnauthorized, storedKey, storeKey } from "./api.ts";
import { renderConversation } from "./conversation.ts";
import { h, tokens, warningBadges } from "./dom.ts";
import "./console.css";

const root = document.getElementById("app") as HTMLElement;

/** The page's frame: a header with sign-out, and a main region. */
function frame(...content: Node[]): HTMLElement {
  const header = h(
    "header",
    { class: "top" },
    h("a", { href: "#/", class: "brand" }, "autocompact console"),
    storedKey()
      ? h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => {
              forgetKey();
              route();
            },
          },
          "Sign out",
        )
      : null,
  );
  const main = h("main", { id: "main" }, ...content);
  root.replaceChildren(header, main);
  return main;
}

function signIn(message?: string): void {
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "sign-in-error",
  });
  const error = h("p", { id: "sign-in-error", class: "error", role: "alert" }, message ?? "");
  const form = h(
    "form",
    { class: "sign-in", "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Sign in"),
    h(
      "p",
      {},
      "Sign in with your tenant's API key. It is kept in this tab's session storage only.",
    ),
    h("label", { for: "api-key" }, "API key"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    error.textContent = "";
    try {
      // Any authenticated read tells a good key from a wrong one.
      await connect(key).listConversations({ limit: 1 });
      storeKey(key);
      route();
    } catch (failure) {
      error.textContent = isUnauthorized(failure)
        ? `That API key was not accepted: ${failure.problem?.detail ?? "unauthorized"}. Check the key and try again.`
        : `Could not sign in: ${describe(failure)}`;
      input.focus();
    }
  });
  frame(form);
  input.focus();
}

async function conversationList(): Promise<void> {
  const search = h("input", {
    id: "search",
    type: "search",
    placeholder: "conversation id",
    autocomplete: "off",
  });
  const body = h("tbody");
  const status = h("p", { role: "status", class: "status" }, "Loading…");
  const more = h("button", { type: "button", hidden: true }, "Load more");
  const table = h(
    "table",
    { class: "conversations" },
    h("caption", {}, "Conversations, most recently active first"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Conversation"),
        h("th", { scope: "col" }, "Turns"),
        h("th", { scope: "col" }, "Estimated tokens"),
        h("th", { scope: "col" }, "Window used"),
        h("th", { scope: "col" }, "Bands (auto / manual)"),
        h("th", { scope: "col" }, "Last fired"),
        h("th", { scope: "col" }, "Warnings"),
      ),
    ),
    body,
  );
  frame(
    h("h1", {}, "Conversations"),
    h("div", { class: "search" }, h("label", { for: "search" }, "Search conversations"), search),
    status,
    h("div", { class: "scroll" }, table),
    more,
  );
  const rows: Array<{ id: string; row: HTMLTableRowElement }> = [];
  const filter = () => {
    const needle = search.value.trim().toLowerCase();
    let shown = 0;
    for (const { id, row } of rows) {
      row.hidden = needle !== "" && !id.toLowerCase().includes(needle);
      if (!row.hidden) shown++;
    }
    status.textContent = `${shown} of ${rows.length} conversations shown`;
  };
  search.addEventListener("input", filter);
  let cursor: string | null = null;
  const load = async () => {
    const page = await connect().listConversations({ limit: 50, ...(cursor ? { cursor } : {}) });
    for (const c of page.conversations) {
      const row = h(
        "tr",
        { "data-conversation": c.id },
        h("th", { scope: "row" }, h("a", { href: `#/c/${encodeURIComponent(c.id)}` }, c.id)),
        h("td", { "data-label": "Turns" }, c.turn_count),
        h("td", { "data-label": "Estimated tokens" }, tokens(c.estimated_tokens)),
        h(
          "td",
          { "data-label": "Window used" },
          c.utilization === null ? "unknown" : `${Math.round(c.utilization * 100)}%`,
        ),
        h("td", { "data-label": "Bands (auto / manual)" }, `${c.bands.auto} / ${c.bands.manual}`),
        h("td", { "data-label": "Last fired" }, c.last_fired_at ?? "never"),
        // What keeps compaction from doing its job: the code on the badge, what to do in its title.
        h("td", { "data-label": "Warnings" }, warningBadges(c.warnings) ?? "none"),
      );
      rows.push({ id: c.id, row });
      body.append(row);
    }
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    filter();
  };
  more.addEventListener("click", () => void load().catch(showError));
  const showError = (error: unknown) => {
    status.textContent = describe(error);
    status.setAttribute("role", "alert");
  };
  await load().catch(showError);
}

/** Shows the page the hash names. */
export function route(): void {
  if (!storedKey()) {
    signIn();
    return;
  }
  const match = /^#\/c\/(.+)$/.exec(location.hash);
  const done = (promise: Promise<void>) =>
    promise.catch((error: unknown) => {
      if (isUnauthorized(error)) {
        forgetKey();
        signIn(`Your API key is no longer accepted: ${describe(error)}. Sign in again.`);
        return;
      }
      frame(h("p", { class: "error", role: "alert" }, describe(error)));
    });
  if (match?.[1]) {
    void done(renderConversation(decodeURIComponent(match[1]), frame));
  } else {
    void done(conversationList());
  }
}

window.addEventListener("hashchange", route);
route();
