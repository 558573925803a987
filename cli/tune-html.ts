/**
 * The page `autocompact tune --html` writes: one self-contained HTML file
 * (inline SVG and CSS, no script, nothing fetched) with the cost/peak scatter
 * of every configuration and, per conversation, its size per turn under the
 * recommended and the default configuration.
 */
import { type ConfigResult, type ConversationMetrics, rankCost } from "../core/tune.ts";
import type { TuneConfig } from "../core/tune-grid.ts";

/** What the page shows. */
export interface TunePage {
  readonly results: readonly ConfigResult[];
  readonly contextWindow: number;
  readonly names: readonly string[];
  readonly recommended: { readonly config: TuneConfig; readonly metrics: ConversationMetrics[] };
  readonly defaults: { readonly config: TuneConfig; readonly metrics: ConversationMetrics[] };
  readonly standIn: boolean;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c,
  );

const label = (config: TuneConfig) =>
  `ratio ${config.trigger_ratio}, keep_first ${config.keep_first}, keep_last ${config.keep_last}, ${
    config.summary ? "summary" : `${config.reasoning ?? "keep"}/${config.tool_calls ?? "keep"}`
  }`;

function scatter(results: readonly ConfigResult[]): string {
  const w = 640;
  const h = 360;
  const pad = 48;
  const costs = results.map(rankCost);
  const peaks = results.map((r) => r.peak_utilization);
  const [minC, maxC] = [Math.min(...costs), Math.max(...costs)];
  const [minP, maxP] = [Math.min(...peaks, 0), Math.max(...peaks, 1)];
  const x = (p: number) => pad + ((p - minP) / (maxP - minP || 1)) * (w - 2 * pad);
  const y = (c: number) => h - pad - ((c - minC) / (maxC - minC || 1)) * (h - 2 * pad);
  const dots = results
    .map((r, i) => {
      const fill = r.recommended ? "#d62728" : r.pareto ? "#1f77b4" : "#bbb";
      const radius = r.recommended ? 6 : r.pareto ? 4 : 3;
      return `<circle cx="${x(r.peak_utilization).toFixed(1)}" cy="${y(costs[i] as number).toFixed(1)}" r="${radius}" fill="${fill}"><title>${escapeHtml(
        `${label(r.config)}: cost ${Math.round(costs[i] as number)}, peak ${r.peak_utilization.toFixed(3)}, overflow ${r.overflow_turns}`,
      )}</title></circle>`;
    })
    .join("");
  return `<svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="cost against peak utilization">
<line x1="${x(1)}" y1="${pad / 2}" x2="${x(1)}" y2="${h - pad}" stroke="#d62728" stroke-dasharray="4"/>
<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#333"/>
<line x1="${pad}" y1="${pad / 2}" x2="${pad}" y2="${h - pad}" stroke="#333"/>
<text x="${w / 2}" y="${h - 10}" text-anchor="middle">peak utilization (${minP.toFixed(2)}–${maxP.toFixed(2)}; dashed: the window)</text>
<text x="12" y="${h / 2}" transform="rotate(-90 12 ${h / 2})" text-anchor="middle">cost (${Math.round(minC)}–${Math.round(maxC)})</text>
${dots}</svg>`;
}

function curve(
  name: string,
  recommended: ConversationMetrics,
  defaults: ConversationMetrics,
  window: number,
): string {
  const w = 300;
  const h = 120;
  const top = Math.max(window, ...(recommended.before ?? []), ...(defaults.before ?? []));
  const turns = Math.max(1, recommended.turns - 1);
  const points = (values: readonly number[] = []) =>
    values
      .map((v, t) => `${((t / turns) * w).toFixed(1)},${(h - (v / top) * h).toFixed(1)}`)
      .join(" ");
  const windowY = (h - (window / top) * h).toFixed(1);
  return `<figure><svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}">
<line x1="0" y1="${windowY}" x2="${w}" y2="${windowY}" stroke="#d62728" stroke-dasharray="4"/>
<polyline fill="none" stroke="#999" points="${points(defaults.before)}"/>
<polyline fill="none" stroke="#1f77b4" points="${points(recommended.before)}"/>
</svg><figcaption>${escapeHtml(name)}: ${recommended.turns} turns; firings ${recommended.firings} (default ${defaults.firings})</figcaption></figure>`;
}

/** Renders the page. */
export function tuneHtml(page: TunePage): string {
  const recommended = page.results.find((r) => r.recommended);
  const curves = page.names
    .map((name, i) =>
      curve(
        name,
        page.recommended.metrics[i] as ConversationMetrics,
        page.defaults.metrics[i] as ConversationMetrics,
        page.contextWindow,
      ),
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>autocompact tune</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1000px}figure{display:inline-block;margin:0 1em 1em 0}figcaption{font-size:12px;max-width:300px;overflow-wrap:anywhere}svg{background:#fafafa}</style>
</head><body>
<h1>autocompact tune</h1>
<p>${page.names.length} conversation(s), ${page.results.length} configurations, window ${page.contextWindow} tokens.${
    page.standIn
      ? " <strong>Summary rule costs are estimates from offline stand-in summaries.</strong>"
      : ""
  }</p>
<p>Recommended: <strong>${escapeHtml(recommended ? label(recommended.config) : "none")}</strong>.</p>
<h2>Cost against peak utilization</h2>
<p>Red: recommended; blue: the Pareto front; grey: the rest. Hover a point for its configuration.</p>
${scatter(page.results)}
<h2>Size per turn</h2>
<p>The estimate each turn's calls see (U<sub>t</sub>): <span style="color:#1f77b4">recommended (${escapeHtml(label(page.recommended.config))})</span>, <span style="color:#999">default (${escapeHtml(label(page.defaults.config))})</span>; dashed: the window.</p>
${curves}
</body></html>
`;
}
