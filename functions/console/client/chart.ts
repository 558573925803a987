/**
 * The size curve: raw and projected tokens per turn, the model's window and
 * the threshold, and a marker at each firing (uPlot, drawn on a canvas);
 * hovering a turn shows its sizes and the audit of the band fired there. The
 * projected curve is what each evaluation saw: once a firing's band has been
 * removed (a reset, a Remove), the evaluations after it saw a band that is
 * gone, so that stretch is drawn apart as history, and a "now" point shows
 * what the next call sends. The firings are also an ordered list in the DOM,
 * for screen readers and tests.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ListedCompaction, TimelineTurn } from "../../../client/index.ts";
import { h, tokens } from "./dom.ts";

/** What the hover box says about one turn. */
function describeTurn(
  row: TimelineTurn,
  band: ListedCompaction | undefined,
  window: number | null,
  now: number | null,
): string {
  const lines = [
    `Turn ${row.turn}`,
    `raw ${tokens(row.raw_tokens)} · projected ${tokens(row.projected_tokens)} · threshold ${tokens(row.threshold)} · window ${tokens(window)}`,
  ];
  if (now !== null) lines.push(`now ${tokens(now)} projected (the next call)`);
  if (row.fired) lines.push(firingText(row, band));
  else if (row.deferred_until) lines.push(`deferred until idle: due ${row.deferred_until}`);
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
  // An idle firing (issue 29) says how long the conversation rested first.
  const rested =
    band?.trigger?.when === "idle"
      ? `, fired idle after ${band.trigger.rested_seconds} s at rest`
      : "";
  return `after turn ${row.turn}, ${which} (${fired.source}) over turns ${fired.from_turn}–${fired.to_turn}${audit}${rested}`;
}

/** What the chart needs besides the timeline and the stored bands. */
export interface ChartContext {
  /** The conversation's estimate now (what the next model call sends). */
  readonly now: number;
  /** The effective `trigger_ratio`: the window is drawn as each threshold over it. */
  readonly triggerRatio: number;
}

const COLORS = {
  raw: "#8a8f98",
  projected: "#1f6feb",
  history: "#9ab7e8",
  window: "#1a7f37",
  threshold: "#d1242f",
  firing: "#bf8700",
  removed: "#6e7781",
  now: "#0550ae",
} as const;

/** The chart and its list of firings. */
export function sizeChart(
  timeline: readonly TimelineTurn[],
  bands: readonly ListedCompaction[],
  context: ChartContext,
): HTMLElement {
  const byPosition = new Map(bands.map((band) => [band.position, band]));
  /** The band fired after `row`, while it is still stored. */
  const firedBand = (row: TimelineTurn) =>
    row.fired?.position == null ? undefined : byPosition.get(row.fired.position);
  const fired = timeline.filter((row) => row.fired);
  const removed = fired.filter((row) => row.fired?.position === null);
  // The evaluations after the first removed firing saw a band that is gone.
  const staleAfter = removed[0]?.turn ?? Number.POSITIVE_INFINITY;
  const windowOf = (row: TimelineTurn) =>
    row.threshold === null ? null : row.threshold / context.triggerRatio;
  const last = timeline[timeline.length - 1];
  const plot = h("div", { class: "plot", role: "img", "aria-label": "Size curve" });
  const hover = h("pre", { class: "hover", "aria-hidden": "true", hidden: true });
  const list = h(
    "ol",
    { id: "firings", class: "firings", "aria-label": "Firings" },
    ...fired.map((row) =>
      h(
        "li",
        {
          "data-firing": row.fired?.position ?? undefined,
          "data-removed": row.fired?.position === null,
          "data-turn": row.turn,
          class: row.fired?.position === null ? "removed" : undefined,
        },
        firingText(row, firedBand(row)),
      ),
    ),
  );
  const history = removed.length
    ? ` ${removed.length} of them removed since: the projected curve after turn ${staleAfter} is what the evaluations saw then (pale); now the next call sends ${tokens(context.now)} tokens.`
    : "";
  const section = h(
    "section",
    { class: "chart", "aria-labelledby": "chart-title" },
    h("h2", { id: "chart-title" }, "Size curve"),
    h(
      "p",
      { class: "hint", id: "chart-hint" },
      `Raw and projected tokens per turn, the window and the threshold, and ${fired.length} firing${fired.length === 1 ? "" : "s"} (hover a turn for its audit).${history}`,
    ),
    plot,
    hover,
    h("h3", {}, "Firings"),
    fired.length ? list : h("p", {}, "No automatic firing yet."),
  );
  if (!last) {
    plot.replaceWith(h("p", {}, "No turns yet."));
    return section;
  }
  const projected = (row: TimelineTurn) => row.projected_tokens;
  const marker = (row: TimelineTurn) => projected(row) ?? row.raw_tokens;
  const dots = (stroke: string, fill: string, size = 11): uPlot.Series => ({
    stroke,
    fill,
    paths: () => null,
    points: { show: true, size, width: 2, fill },
  });
  const column = (value: (row: TimelineTurn) => number | null) => timeline.map(value);
  // Each series with its values; the two of removed bands only once a band was removed.
  const columns: Array<[uPlot.Series, Array<number | null>] | false> = [
    [{ label: "raw", stroke: COLORS.raw, width: 2 }, column((row) => row.raw_tokens)],
    [
      { label: "projected", stroke: COLORS.projected, width: 2, spanGaps: false },
      column((row) => (row.turn <= staleAfter ? projected(row) : null)),
    ],
    removed.length > 0 && [
      // It starts at the last current point, so the two curves join.
      {
        label: "projected then (bands since removed)",
        stroke: COLORS.history,
        dash: [2, 3],
        width: 2,
      },
      column((row) => (row.turn >= staleAfter ? projected(row) : null)),
    ],
    [{ label: "window", stroke: COLORS.window, width: 1 }, column(windowOf)],
    [
      { label: "threshold", stroke: COLORS.threshold, dash: [6, 4], width: 1 },
      column((row) => row.threshold),
    ],
    [
      { label: "firing", ...dots(COLORS.firing, "#ffd33d") },
      column((row) => (row.fired && row.fired.position !== null ? marker(row) : null)),
    ],
    removed.length > 0 && [
      { label: "firing, band removed", ...dots(COLORS.removed, "#ffffff") },
      column((row) => (row.fired?.position === null ? marker(row) : null)),
    ],
    [
      { label: "now", ...dots(COLORS.now, COLORS.now, 9) },
      column((row) => (row === last ? context.now : null)),
    ],
  ];
  const shown = columns.filter((entry) => entry !== false);
  const data: uPlot.AlignedData = [
    timeline.map((row) => row.turn),
    ...shown.map(([, values]) => values),
  ];
  /**
   * The window's and the threshold's values written at the right end of their lines, on a
   * white ground so the curves under them do not hide them: the threshold's below its line
   * when there is room (else above), the window's above its own line and never over the
   * threshold's.
   */
  const labelLines = (u: uPlot) => {
    const end = [...timeline].reverse().find((row) => row.threshold !== null);
    const window = end ? windowOf(end) : null;
    if (!end?.threshold || window === null) return;
    const ctx = u.ctx;
    const ratio = devicePixelRatio || 1;
    const size = 12 * ratio;
    const gap = 3 * ratio;
    const bottom = u.bbox.top + u.bbox.height;
    const thresholdLine = u.valToPos(end.threshold, "y", true);
    const thresholdBase =
      thresholdLine + gap + size <= bottom ? thresholdLine + gap + size : thresholdLine - gap;
    const windowBase = Math.min(u.valToPos(window, "y", true) - gap, thresholdBase - size - gap);
    ctx.save();
    ctx.font = `${size}px system-ui, sans-serif`;
    ctx.textAlign = "right";
    const right = u.bbox.left + u.bbox.width - 4 * ratio;
    const marks = [
      [`window ${tokens(window)}`, windowBase, COLORS.window],
      [`threshold ${tokens(end.threshold)}`, thresholdBase, COLORS.threshold],
    ] as const;
    for (const [text, baseline, color] of marks) {
      const textWidth = ctx.measureText(text).width;
      ctx.fillStyle = "rgb(255 255 255 / 85%)";
      ctx.fillRect(right - textWidth - gap, baseline - size, textWidth + 2 * gap, size + gap);
      ctx.fillStyle = color;
      ctx.fillText(text, right, baseline);
    }
    ctx.restore();
  };
  const width = () => Math.max(280, Math.min(1100, section.clientWidth || 320));
  const options: uPlot.Options = {
    width: width(),
    height: 260,
    scales: { x: { time: false } },
    axes: [{ label: "turn" }, { label: "tokens", size: 70 }],
    series: [{ label: "turn" }, ...shown.map(([series]) => series)],
    hooks: {
      draw: [labelLines],
      setCursor: [
        (u) => {
          const index = u.cursor.idx;
          const row = index === null || index === undefined ? undefined : timeline[index];
          if (!row) {
            hover.hidden = true;
            return;
          }
          hover.hidden = false;
          hover.textContent = describeTurn(
            row,
            firedBand(row),
            windowOf(row),
            row === last ? context.now : null,
          );
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
