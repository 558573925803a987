/**
 * The console's confirmation of a destructive action: a modal <dialog> that
 * names what the action will remove, with Cancel focused first. Escape, the
 * Cancel button and a click outside the box all decline; nothing is removed
 * until the user presses the action's own button.
 */
import { h } from "./dom.ts";

/** What the dialog asks: a question, the things it will remove, and the action's button. */
export interface Confirmation {
  readonly title: string;
  readonly items: readonly string[];
  readonly action: string;
}

/** Asks `confirmation` in a modal dialog; resolves to whether the user confirmed. */
export function confirmRemoval(confirmation: Confirmation): Promise<boolean> {
  const cancel = h("button", { type: "submit", value: "cancel", autofocus: true }, "Cancel");
  const confirm = h(
    "button",
    { type: "submit", value: "confirm", class: "danger" },
    confirmation.action,
  );
  const dialog = h(
    "dialog",
    { class: "confirm", "aria-labelledby": "confirm-title" },
    h(
      "form",
      { method: "dialog" },
      h("h2", { id: "confirm-title" }, confirmation.title),
      h("p", {}, "This removes:"),
      h("ul", { class: "removes" }, ...confirmation.items.map((item) => h("li", {}, item))),
      h("p", { class: "hint" }, "The turns stay stored; only these bands go."),
      h("div", { class: "actions" }, cancel, confirm),
    ),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    // A click on the backdrop (outside the box) declines.
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close("cancel");
    });
    dialog.showModal();
    cancel.focus();
  });
}
