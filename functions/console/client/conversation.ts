/**
 * One conversation: its size curve, its bands over the turn axis, the
 * projected view as a reader, and the actions that steer it (reset the
 * automatic bands, remove one band, a manual compaction previewed by a dry
 * run before it is applied, the auto config).
 */
import {
  type ConfigTree,
  type ConversationConfig,
  type JpEvent,
  type ListedCompaction,
  type Projection,
  ServiceError,
} from "../../../client/index.ts";
import { connect, describe } from "./api.ts";
import { sizeChart } from "./chart.ts";
import { confirmRemoval } from "./confirm.ts";
import { h, policies, tokens, warningBadges } from "./dom.ts";
import { eventText } from "./event-text.ts";

type Frame = (...content: Node[]) => HTMLElement;

/** Draws the conversation page; `notice` is the outcome of the action that led here. */
export async function renderConversation(id: string, frame: Frame, notice = ""): Promise<void> {
  frame(h("p", { role: "status" }, `Loading ${id}…`));
  const client = connect();
  const [summary, timeline, projection, config] = await Promise.all([
    client.conversation(id),
    client.timeline(id),
    client.projection(id),
    client.getConfig(id),
  ]);
  const bands = summary.compactions;
  const again = (message: string) => renderConversation(id, frame, message);
  const status = h("p", { id: "status", role: "status", class: "status" }, notice);
  frame(
    h("p", {}, h("a", { href: "#/" }, "← Conversations")),
    h("h1", {}, id),
    h(
      "p",
      { class: "facts" },
      `${summary.turn_count} turns · ${tokens(summary.estimated_tokens)} tokens projected (${estimatorText(summary.estimator)}) · ${bands.filter((b) => b.source === "auto").length} automatic and ${bands.filter((b) => b.source === "manual").length} manual bands`,
    ),
    ...warningList(summary.warnings),
    status,
    sizeChart(timeline.turns, bands, {
      now: summary.estimated_tokens,
      triggerRatio: config.effective.trigger_ratio,
    }),
    bandStrip(bands, summary.turn_count),
    bandTable(id, bands, status, again),
    manualCompaction(id, again),
    configEditor(id, config, again),
    reader(projection, bands),
  );
}

/** How the estimate counts tokens: D50's chars / 4, or the fit to the turns' reported usage. */
function estimatorText(estimator: {
  readonly kind: "chars" | "calibrated";
  readonly tokens_per_char: number;
  readonly overhead_tokens: number;
  readonly turns_with_usage: number;
}): string {
  if (estimator.kind === "chars") return "estimate: chars / 4";
  return `estimate: ${estimator.tokens_per_char.toFixed(3)} tokens a byte + ${tokens(estimator.overhead_tokens)} overhead, fitted to ${estimator.turns_with_usage} turns' usage`;
}

/** The conversation's warnings, each its code and what to do; nothing when there are none. */
function warningList(
  warnings: readonly { readonly code: string; readonly detail: string }[],
): HTMLElement[] {
  if (warnings.length === 0) return [];
  const section = h(
    "section",
    { class: "warning-list", "aria-labelledby": "warnings-title" },
    h("h2", { id: "warnings-title" }, "Warnings"),
    h(
      "ul",
      {},
      ...warnings.map((w) =>
        h("li", { "data-warning": w.code }, warningBadges([w]), " ", h("span", {}, w.detail)),
      ),
    ),
  );
  return [section];
}

/** The bands over the turn axis, one lane per overlap: auto or manual, and their policies. */
function bandStrip(bands: readonly ListedCompaction[], turnCount: number): HTMLElement {
  const lanes: ListedCompaction[][] = [];
  for (const band of bands) {
    const lane = lanes.find((l) =>
      l.every((other) => other.to_turn < band.from_turn || other.from_turn > band.to_turn),
    );
    if (lane) lane.push(band);
    else lanes.push([band]);
  }
  const span = Math.max(turnCount, 1);
  const strip = h("div", { class: "strip", role: "list", "aria-label": "Bands over the turns" });
  for (const lane of lanes) {
    const row = h("div", { class: "lane" });
    for (const band of lane) {
      const kinds = policies(band);
      const label = `band #${band.position}, ${band.source}, turns ${band.from_turn}–${band.to_turn}: ${kinds.join(", ") || "no policy"}`;
      const mark = h(
        "div",
        {
          role: "listitem",
          class: `band ${band.source} ${band.summary ? "summary" : band.tool_calls?.policy === "omit" ? "omit" : "strip"}`,
          title: label,
          "aria-label": label,
          "data-band": band.position,
        },
        h("span", { class: "band-label" }, `#${band.position}`),
      );
      mark.style.left = `${(100 * band.from_turn) / span}%`;
      mark.style.width = `${(100 * (band.to_turn - band.from_turn + 1)) / span}%`;
      row.append(mark);
    }
    strip.append(row);
  }
  // A label that does not fit its band is hidden whole (the band keeps its title and
  // aria-label), never cut to a bare "#".
  new ResizeObserver(() => {
    for (const mark of strip.querySelectorAll<HTMLElement>("[data-band]")) {
      const label = mark.firstElementChild as HTMLElement | null;
      if (!label) continue;
      mark.classList.toggle("unlabelled", label.offsetWidth > mark.clientWidth);
    }
  }).observe(strip);
  return h(
    "section",
    { "aria-labelledby": "strip-title" },
    h("h2", { id: "strip-title" }, "Bands"),
    h(
      "p",
      { class: "legend" },
      h("span", { class: "key auto" }, "automatic"),
      h("span", { class: "key manual" }, "manual"),
      h("span", { class: "key strip" }, "strip"),
      h("span", { class: "key omit" }, "omit"),
      h("span", { class: "key summary" }, "summary"),
    ),
    bands.length ? strip : h("p", {}, "No bands: every turn is sent as it was posted."),
    h("p", { class: "axis" }, h("span", {}, "turn 0"), h("span", {}, `turn ${turnCount - 1}`)),
  );
}

/** The bands as a table, each with its remove button; and the reset of the automatic ones. */
function bandTable(
  id: string,
  bands: readonly ListedCompaction[],
  status: HTMLElement,
  again: (message: string) => Promise<void>,
): HTMLElement {
  const act = async (
    label: string,
    request: { source: "auto" } | { position: number },
    removes: readonly ListedCompaction[],
  ) => {
    const many = removes.length === 1 ? "band" : `${removes.length} bands`;
    const confirmed = await confirmRemoval({
      title:
        "source" in request ? "Reset the automatic bands?" : `Remove band #${request.position}?`,
      items: removes.map(bandWords),
      action: `Remove ${many}`,
    });
    if (!confirmed) {
      status.textContent = `${label}: cancelled, nothing removed.`;
      return;
    }
    try {
      const { removed } = await connect().reset(id, request);
      await again(`${label}: removed ${removed.length} band${removed.length === 1 ? "" : "s"}.`);
    } catch (error) {
      status.textContent = describe(error);
    }
  };
  const auto = bands.filter((band) => band.source === "auto");
  return h(
    "section",
    { "aria-labelledby": "bands-title" },
    h("h2", { id: "bands-title" }, "Band list"),
    h(
      "button",
      {
        type: "button",
        id: "reset-auto",
        disabled: auto.length === 0,
        onclick: () => void act("Reset automatic bands", { source: "auto" }, auto),
      },
      "Reset automatic bands",
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "bands" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "#"),
            h("th", { scope: "col" }, "Turns"),
            h("th", { scope: "col" }, "Source"),
            h("th", { scope: "col" }, "Policies"),
            h("th", { scope: "col" }, "Fired at"),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        h(
          "tbody",
          {},
          ...bands.map((band) =>
            h(
              "tr",
              { "data-band-row": band.position, "data-source": band.source },
              h("td", { "data-label": "#" }, band.position),
              h("td", { "data-label": "Turns" }, `${band.from_turn}–${band.to_turn}`),
              h("td", { "data-label": "Source" }, band.source),
              h("td", { "data-label": "Policies" }, policies(band).join(", ")),
              h(
                "td",
                { "data-label": band.trigger ? "Fired at" : undefined },
                band.trigger
                  ? `turn ${band.trigger.turn}: ${tokens(band.trigger.estimated_tokens)} → ${tokens(band.trigger.estimated_tokens_after)}`
                  : "",
              ),
              h(
                "td",
                {},
                h(
                  "button",
                  {
                    type: "button",
                    "aria-label": `Remove band ${band.position}`,
                    onclick: () =>
                      void act(`Removed band ${band.position}`, { position: band.position }, [
                        band,
                      ]),
                  },
                  "Remove",
                ),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

/** One band in words, as the confirmation lists it. */
function bandWords(band: ListedCompaction): string {
  return `band #${band.position} (${band.source}), turns ${band.from_turn}–${band.to_turn}: ${policies(band).join(", ") || "no policy"}`;
}

/**
 * A problem in words: with located errors, its title and each error once
 * (its detail only joins them); else its detail.
 */
function problemNodes(error: unknown): Node[] {
  const located = error instanceof ServiceError ? (error.problem?.errors ?? []) : [];
  if (!(error instanceof ServiceError) || located.length === 0) {
    return [h("span", {}, describe(error))];
  }
  return [
    h("span", {}, `${error.problem?.title ?? "Error"} (${error.status}):`),
    h(
      "ul",
      {},
      ...located.map((e) => h("li", {}, e.pointer ? `${e.pointer}: ${e.detail}` : e.detail)),
      error.problem?.errors_omitted
        ? h("li", {}, `and ${error.problem.errors_omitted} more`)
        : null,
    ),
  ];
}

/** A manual compaction in RFD 064's DSL: previewed by a dry run, then applied. */
function manualCompaction(id: string, again: (message: string) => Promise<void>): HTMLElement {
  const spec = h("input", {
    id: "spec",
    name: "spec",
    placeholder: "r+t:..-3",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "spec-help",
  });
  const preview = h("div", { id: "preview", "aria-live": "polite" });
  const apply = h("button", { type: "button", id: "apply", disabled: true }, "Apply");
  let previewed: string | null = null;
  spec.addEventListener("input", () => {
    apply.disabled = spec.value.trim() !== previewed;
  });
  const form = h(
    "form",
    { class: "manual" },
    h("label", { for: "spec" }, "Compaction spec (RFD 064 DSL)"),
    h(
      "p",
      { id: "spec-help", class: "hint" },
      "POLICIES[:RANGE]: r strips reasoning, t strips tool calls (t=omit omits them), s summarizes, joined by +; turns are 0-based and -N counts from the last turn. r+t:..-3 strips reasoning and tool calls from turn 0 up to the last three turns.",
    ),
    spec,
    h("button", { type: "submit", id: "dry-run" }, "Preview"),
    apply,
    preview,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = spec.value.trim();
    preview.replaceChildren();
    previewed = null;
    apply.disabled = true;
    try {
      const dry = await connect().previewCompaction(id, { spec: text });
      const c = dry.compaction;
      previewed = text;
      apply.disabled = false;
      preview.replaceChildren(
        h(
          "p",
          {
            class: "dry-run",
            "data-from": c.from_turn,
            "data-to": c.to_turn,
            "data-before": dry.estimated_tokens_before,
            "data-after": dry.estimated_tokens_after,
          },
          `Would compact turns ${c.from_turn}–${c.to_turn} (${policies(c).join(", ")}): ${tokens(dry.estimated_tokens_before)} → ${tokens(dry.estimated_tokens_after)} tokens. Nothing is written until you apply.`,
        ),
      );
    } catch (error) {
      preview.replaceChildren(h("div", { class: "error", role: "alert" }, ...problemNodes(error)));
    }
  });
  apply.addEventListener("click", async () => {
    if (previewed === null) return;
    try {
      const band = await connect().compact(id, { spec: previewed });
      await again(`Added band #${band.position} over turns ${band.from_turn}–${band.to_turn}.`);
    } catch (error) {
      preview.replaceChildren(h("div", { class: "error", role: "alert" }, ...problemNodes(error)));
    }
  });
  return h(
    "section",
    { "aria-labelledby": "manual-title" },
    h("h2", { id: "manual-title" }, "Manual compaction"),
    form,
  );
}

/** The conversation's auto config as JSON, saved with PUT; the API's validation messages shown. */
function configEditor(
  id: string,
  config: ConversationConfig,
  again: (message: string) => Promise<void>,
): HTMLElement {
  const text = h("textarea", { id: "config", rows: 10, spellcheck: "false" });
  text.value = JSON.stringify({ conversation: config.conversation }, null, 2);
  const message = h("div", { id: "config-error", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "config" },
    h("label", { for: "config" }, "Automatic compaction config (JSON)"),
    text,
    h("button", { type: "submit" }, "Save config"),
    message,
    h("h3", {}, "Effective"),
    h("pre", { class: "effective" }, JSON.stringify(config.effective, null, 2)),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.replaceChildren();
    let body: ConfigTree;
    try {
      // Sent as typed: the API checks the tree and locates each problem.
      body = JSON.parse(text.value) as ConfigTree;
    } catch (error) {
      message.replaceChildren(
        h("p", { class: "error", role: "alert" }, `Not JSON: ${(error as Error).message}`),
      );
      return;
    }
    try {
      await connect().putConfig(id, body);
      await again("Config saved.");
    } catch (error) {
      message.replaceChildren(h("div", { class: "error", role: "alert" }, ...problemNodes(error)));
    }
  });
  return h(
    "section",
    { "aria-labelledby": "config-title" },
    h("h2", { id: "config-title" }, "Auto config"),
    form,
  );
}

const MAX_TEXT = 600;

/** The projected view: what the next model call sees, turn by turn, compacted turns marked. */
function reader(projection: Projection, bands: readonly ListedCompaction[]): HTMLElement {
  const groups: JpEvent[][] = [];
  for (const event of projection.events) {
    if (event.type === "compaction") continue;
    if (event.type === "turn_start" || groups.length === 0) groups.push([]);
    if (event.type !== "turn_start") groups[groups.length - 1]?.push(event);
  }
  const articles = groups.map((events, index) => {
    const origin = projection.turns[index];
    const covering =
      origin && "kept" in origin
        ? bands.filter((b) => b.from_turn <= origin.kept && origin.kept <= b.to_turn)
        : [];
    const summary = origin && "summary" in origin ? origin.summary : undefined;
    const heading = summary
      ? `Summary of turns ${summary.from}–${summary.to}`
      : `Turn ${origin && "kept" in origin ? origin.kept : index}`;
    const marks = covering.flatMap((b) => policies(b).map((p) => `${p} (band #${b.position})`));
    return h(
      "article",
      {
        class: `turn${summary ? " summarized" : covering.length ? " compacted" : ""}`,
        "data-compacted": covering.length > 0 || summary !== undefined,
      },
      h("h3", {}, heading),
      summary ? h("p", { class: "mark" }, "summary") : null,
      marks.length ? h("p", { class: "mark" }, `compacted: ${marks.join("; ")}`) : null,
      ...events.map((event) => {
        const text = eventText(event);
        return h(
          "div",
          { class: `event ${event.type}` },
          h("span", { class: "type" }, event.type.replaceAll("_", " ")),
          h("p", {}, text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text),
        );
      }),
    );
  });
  return h(
    "section",
    { class: "reader", "aria-labelledby": "reader-title" },
    h("h2", { id: "reader-title" }, "Projected view"),
    h(
      "p",
      { class: "hint" },
      `What the next model call sees: ${tokens(projection.estimated_tokens)} tokens in ${groups.length} turns.`,
    ),
    ...articles,
  );
}
