/**
 * The size curve: raw and projected tokens per turn, the threshold, and a
 * marker at each firing (uPlot, drawn on a canvas); hovering a turn shows its
 * sizes and the audit of the band fired there. The firings are also an
 * ordered list in the DOM, for screen readers and tests.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ListedCompaction, TimelineTurn } from "../../../client/index.ts";
import { h, tokens } from "./dom.ts";

/** What the hover box says about one turn. */
function describeTurn(row: TimelineTurn, band: ListedCompaction | undefined): string {
  const lines = [
    `Turn ${row.turn}`,
    `raw ${tokens(row.raw_tokens)} · projected ${tokens(row.projected_tokens)} · threshold ${tokens(row.threshold)}`,
  ];
  if (row.fired) lines.push(firingText(row, band));
  else if (row.skip_reason) lines.push(`skipped: ${row.skip_reason}`);
  return lines.join("\n");
}

/** One firing in words: the band, its turns and its audit. */
export function firingText(row: TimelineTurn, band: ListedCompaction | undefined): string {
  const fired = row.fired;
  if (!fired) return "";
  const audit = band?.trigger
    ? `: ${tokens(band.trigger.estimated_tokens)} tokens over the threshold ${tokens(band.trigger.threshold)} of a ${tokens(band.trigger.context_window)} window, ${tokens(band.trigger.estimated_tokens_after)} after`
    : "";
  const which = fired.position === null ? "a band since removed" : `band #${fired.position}`;
  return `after turn ${row.turn}, ${which} (${fired.source}) over turns ${fired.from_turn}–${fired.to_turn}${audit}`;
}

/** The chart and its list of firings. */
export function sizeChart(
  timeline: readonly TimelineTurn[],
  bands: readonly ListedCompaction[],
): HTMLElement {
  const byPosition = new Map(bands.map((band) => [band.position, band]));
  /** The band fired after `row`, while it is still stored. */
  const firedBand = (row: TimelineTurn) =>
    row.fired?.position == null ? undefined : byPosition.get(row.fired.position);
  const fired = timeline.filter((row) => row.fired);
  const plot = h("div", { class: "plot", role: "img", "aria-label": "Size curve" });
  const hover = h("pre", { class: "hover", "aria-hidden": "true", hidden: true });
  const list = h(
    "ol",
    { id: "firings", class: "firings", "aria-label": "Firings" },
    ...fired.map((row) =>
      h(
        "li",
        { "data-firing": row.fired?.position ?? undefined, "data-turn": row.turn },
        firingText(row, firedBand(row)),
      ),
    ),
  );
  const section = h(
    "section",
    { class: "chart", "aria-labelledby": "chart-title" },
    h("h2", { id: "chart-title" }, "Size curve"),
    h(
      "p",
      { class: "hint" },
      `Raw and projected tokens per turn, the threshold, and ${fired.length} firing${fired.length === 1 ? "" : "s"} (hover a turn for its audit).`,
    ),
    plot,
    hover,
    h("h3", {}, "Firings"),
    fired.length ? list : h("p", {}, "No automatic firing yet."),
  );
  if (timeline.length === 0) {
    plot.replaceWith(h("p", {}, "No turns yet."));
    return section;
  }
  const xs = timeline.map((row) => row.turn);
  const data: uPlot.AlignedData = [
    xs,
    timeline.map((row) => row.raw_tokens),
    timeline.map((row) => row.projected_tokens),
    timeline.map((row) => row.threshold),
    timeline.map((row) => (row.fired ? (row.projected_tokens ?? row.raw_tokens) : null)),
  ];
  const width = () => Math.max(280, Math.min(1100, section.clientWidth || 320));
  const options: uPlot.Options = {
    width: width(),
    height: 260,
    scales: { x: { time: false } },
    axes: [{ label: "turn" }, { label: "tokens", size: 70 }],
    series: [
      { label: "turn" },
      { label: "raw", stroke: "#8a8f98", width: 2 },
      { label: "projected", stroke: "#1f6feb", width: 2, spanGaps: false },
      { label: "threshold", stroke: "#d1242f", dash: [6, 4], width: 1 },
      {
        label: "firing",
        stroke: "#bf8700",
        fill: "#bf8700",
        paths: () => null,
        points: { show: true, size: 11, width: 2, fill: "#ffd33d" },
      },
    ],
    hooks: {
      setCursor: [
        (u) => {
          const index = u.cursor.idx;
          const row = index === null || index === undefined ? undefined : timeline[index];
          if (!row) {
            hover.hidden = true;
            return;
          }
          hover.hidden = false;
          hover.textContent = describeTurn(row, firedBand(row));
        },
      ],
    },
  };
  // uPlot measures its container: it is drawn once the section is in the page.
  queueMicrotask(() => {
    const chart = new uPlot({ ...options, width: width() }, data, plot);
    let drawn = chart.width;
    new ResizeObserver(() => {
      // Only a new width redraws: a redraw can change the section's height, not its width.
      if (width() === drawn) return;
      drawn = width();
      chart.setSize({ width: drawn, height: 260 });
    }).observe(section);
  });
  return section;
}
