/**
 * The page `autocompact tune --html` writes: one self-contained HTML file
 * (inline SVG and one stylesheet, no script, nothing fetched; a
 * Content-Security-Policy that allows only that stylesheet, by its hash)
 * with the verdict and its warnings in words, the recommended TOML, dollars
 * against `trigger_ratio` per rule, every configuration's row with each
 * column defined, and each conversation's input per call with the window
 * and the threshold.
 */
import { createHash } from "node:crypto";
import type { Billing, ConfigResult, ConversationMetrics } from "../core/tune.ts";
import { isDefaultConfig, type TuneConfig } from "../core/tune-grid.ts";
import { describeConfig, type TuneSummary } from "../core/tune-verdict.ts";

/** What the page shows. */
export interface TunePage {
  readonly results: readonly ConfigResult[];
  readonly summary: TuneSummary;
  readonly contextWindow: number;
  readonly names: readonly string[];
  /** Each conversation's curves (`call_inputs`) under {@link shownConfig}. */
  readonly shown: readonly ConversationMetrics[];
  readonly shownConfig: TuneConfig;
  readonly toml: string | undefined;
  readonly billing: Billing;
  readonly standIn: boolean;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c,
  );

const STYLE =
  "body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}figure{display:inline-block;margin:0 1em 1em 0}figcaption{font-size:12px;max-width:300px;overflow-wrap:anywhere}svg{background:#fafafa}table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;text-align:right;border-bottom:1px solid #eee}td:first-child,th:first-child{text-align:left}tr.rec{background:#fde2e2}tr.def{background:#e2ecfd}dt{font-weight:bold}pre{background:#f4f4f4;padding:1em}.rec{color:#d62728}.def{color:#1f77b4}.warn{color:#a05a00}";

/** The columns of the table, each with its definition (docs/tuning.md). */
const COLUMNS: readonly [string, string, (r: ConfigResult) => string][] = [
  [
    "configuration",
    "trigger_ratio, keep_first, keep_last, the rule's policies and any extra grid keys.",
    (r) => describeConfig(r.config),
  ],
  [
    "dollars",
    "The calls' input (cache writes and reads at the pricing profile's multiples of the input price) and output, plus a summary rule's summarizer tokens, in USD.",
    (r) => r.dollars.toFixed(2),
  ],
  [
    "calls",
    "Model calls: one per response, the first after the turn's request and one after each group of tool results.",
    (r) => String(r.calls),
  ],
  [
    "cache read",
    "Input tokens read from the prompt cache: the common prefix with the previous call, when it was within the cache's lifetime and at least its minimum.",
    (r) => Math.round(r.cache_read_tokens).toLocaleString("en-US"),
  ],
  [
    "cache write",
    "Input tokens not read from the cache (written to it).",
    (r) => Math.round(r.cache_write_tokens).toLocaleString("en-US"),
  ],
  [
    "output",
    "Tokens of the model's responses.",
    (r) => Math.round(r.output_tokens).toLocaleString("en-US"),
  ],
  ["overflow calls", "Calls whose input is over the window.", (r) => String(r.overflow_calls)],
  ["firings", "Bands appended.", (r) => String(r.firings)],
  [
    "still over",
    "Firings whose view after the band is still over the threshold.",
    (r) => String(r.still_over_firings),
  ],
  ["one-turn bands", "Bands that cover a single turn.", (r) => String(r.one_turn_bands)],
  [
    "longest run",
    "The most consecutive turns that each fired.",
    (r) => String(r.longest_firing_run),
  ],
  [
    "retention",
    "The mean, over calls, of the share of the raw history's characters still in the view.",
    (r) => r.retention.toFixed(3),
  ],
  [
    "peak",
    "The largest view a turn's calls see, over the window.",
    (r) => r.peak_utilization.toFixed(3),
  ],
];

function table(results: readonly ConfigResult[]): string {
  const head = `<tr>${COLUMNS.map(([name]) => `<th>${name}</th>`).join("")}</tr>`;
  const rows = results.map((r) => {
    const kind = r.recommended ? ' class="rec"' : isDefaultConfig(r.config) ? ' class="def"' : "";
    return `<tr${kind}>${COLUMNS.map(([, , cell]) => `<td>${escapeHtml(cell(r))}</td>`).join("")}</tr>`;
  });
  const terms = COLUMNS.map(([name, definition]) => `<dt>${name}</dt><dd>${definition}</dd>`);
  return `<dl>${terms.join("")}</dl>\n<table>${head}\n${rows.join("\n")}</table>`;
}

/** A configuration's rule: every key but trigger_ratio. */
const ruleKey = (config: TuneConfig) => JSON.stringify({ ...config, trigger_ratio: undefined });

/** Dollars against trigger_ratio, one line per rule (every other key). */
function ratioChart(results: readonly ConfigResult[], recommended: TuneConfig | null): string {
  const w = 640;
  const h = 320;
  const pad = 56;
  const rules = new Map<string, ConfigResult[]>();
  for (const r of results) {
    const key = ruleKey(r.config);
    rules.set(key, [...(rules.get(key) ?? []), r]);
  }
  const ratios = results.map((r) => r.config.trigger_ratio);
  const costs = results.map((r) => r.dollars);
  const [minR, maxR] = [Math.min(...ratios), Math.max(...ratios)];
  const [minC, maxC] = [Math.min(...costs), Math.max(...costs)];
  const x = (v: number) => pad + ((v - minR) / (maxR - minR || 1)) * (w - 2 * pad);
  const y = (c: number) => h - pad - ((c - minC) / (maxC - minC || 1)) * (h - 2 * pad);
  const recKey = recommended ? ruleKey(recommended) : "";
  const lines = [...rules.entries()].map(([key, group]) => {
    group.sort((a, b) => a.config.trigger_ratio - b.config.trigger_ratio);
    const isRec = key === recKey;
    const isDef = group.some((r) => isDefaultConfig(r.config));
    const stroke = isRec ? "#d62728" : isDef ? "#1f77b4" : "#ccc";
    const points = group
      .map((r) => `${x(r.config.trigger_ratio).toFixed(1)},${y(r.dollars).toFixed(1)}`)
      .join(" ");
    return {
      first: isRec || isDef,
      svg: `<polyline fill="none" stroke="${stroke}" stroke-width="${isRec || isDef ? 2 : 1}" points="${points}"/>`,
    };
  });
  // The highlighted rules are drawn last, over the others.
  const drawn = [...lines.filter((l) => !l.first), ...lines.filter((l) => l.first)].map(
    (l) => l.svg,
  );
  return `<svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="dollars against trigger_ratio per rule">
<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#333"/>
<line x1="${pad}" y1="${pad / 2}" x2="${pad}" y2="${h - pad}" stroke="#333"/>
<text x="${w / 2}" y="${h - 12}" text-anchor="middle">trigger_ratio (${minR}–${maxR})</text>
<text x="14" y="${h / 2}" transform="rotate(-90 14 ${h / 2})" text-anchor="middle">dollars ($${minC.toFixed(2)}–$${maxC.toFixed(2)})</text>
${drawn.join("\n")}</svg>`;
}

/** One conversation's input per call, with the window and the threshold. */
function curve(
  name: string,
  metrics: ConversationMetrics,
  window: number,
  threshold: number,
): string {
  const w = 300;
  const h = 120;
  const inputs = metrics.call_inputs ?? [];
  const top = Math.max(window, ...inputs);
  const calls = Math.max(1, inputs.length - 1);
  const points = inputs
    .map((v, c) => `${((c / calls) * w).toFixed(1)},${(h - (v / top) * h).toFixed(1)}`)
    .join(" ");
  const level = (v: number) => (h - (v / top) * h).toFixed(1);
  return `<figure><svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="input per call">
<line x1="0" y1="${level(window)}" x2="${w}" y2="${level(window)}" stroke="#d62728" stroke-dasharray="4"/>
<line x1="0" y1="${level(threshold)}" x2="${w}" y2="${level(threshold)}" stroke="#a05a00" stroke-dasharray="2"/>
<polyline fill="none" stroke="#1f77b4" points="${points}"/>
</svg><figcaption>${escapeHtml(name)}: ${metrics.turns} turns, ${metrics.calls} calls, ${metrics.firings} firings, ${metrics.overflow_calls} overflowing calls</figcaption></figure>`;
}

function verdict(summary: TuneSummary): string {
  const answer = summary.recommended
    ? `<p>Recommended: <strong class="rec">${escapeHtml(describeConfig(summary.recommended))}</strong>, because it has ${escapeHtml(summary.reason)}.</p>`
    : `<p><strong>No single recommendation</strong>: ${escapeHtml(summary.reason)}.</p>`;
  const s = summary.saving_vs_default;
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  const saving = s
    ? `<p>Saving against D50's default: ${pct(s.median)} (90% interval ${pct(s.p05)} to ${pct(s.p95)}, resampling conversations); the recommendation costs less in ${pct(s.win_share)} of the resamples.</p>`
    : "";
  const warnings = summary.warnings.length
    ? `<ul>${summary.warnings.map((w) => `<li class="warn">${w.code}: ${escapeHtml(w.detail)}</li>`).join("")}</ul>`
    : "<p>No warnings.</p>";
  const classes = `<ul>${summary.classes
    .map(
      (c) =>
        `<li>${c.class} (${c.conversations} conversation(s)): ${escapeHtml(c.recommended ? describeConfig(c.recommended) : "no single recommendation")}</li>`,
    )
    .join("")}</ul>`;
  return `${answer}${saving}<h3>Warnings</h3>${warnings}<h3>Classes</h3>${classes}`;
}

/** Renders the page. */
export function tuneHtml(page: TunePage): string {
  const threshold = page.shownConfig.trigger_ratio * page.contextWindow;
  const curves = page.names
    .map((name, i) =>
      curve(name, page.shown[i] as ConversationMetrics, page.contextWindow, threshold),
    )
    .join("\n");
  const hash = createHash("sha256").update(STYLE).digest("base64");
  const policy = `default-src 'none'; style-src 'sha256-${hash}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
  const { profile, prices } = page.billing;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<title>autocompact tune</title>
<style>${STYLE}</style>
</head><body>
<h1>autocompact tune</h1>
<p>${page.names.length} conversation(s), ${page.results.length} configurations, window ${page.contextWindow} tokens; pricing ${profile.name} (a cache write ${profile.write}x, a read ${profile.read}x the input price, lifetime ${profile.lifetime_s} s), $${prices.input} input and $${prices.output} output per million tokens (${escapeHtml(prices.source)}).${
    page.standIn
      ? " <strong>Summary rule costs are estimates from offline stand-in summaries.</strong>"
      : ""
  }</p>
<h2>Verdict</h2>
${verdict(page.summary)}
${page.toml ? `<h2>Recommended configuration (TOML)</h2>\n<pre>${escapeHtml(page.toml)}</pre>` : ""}
<h2>Dollars against trigger_ratio, per rule</h2>
<p>One line per rule (every key but trigger_ratio): <span class="rec">the recommended rule</span>, <span class="def">D50's default rule</span>, grey the rest.</p>
${ratioChart(page.results, page.summary.recommended)}
<h2>Every configuration</h2>
${table(page.results)}
<h2>Input per call</h2>
<p>Each conversation's input per call under ${escapeHtml(describeConfig(page.shownConfig))}: <span class="rec">dashed red, the window</span>; <span class="warn">dotted, the threshold</span> (trigger_ratio × window).</p>
${curves}
</body></html>
`;
}
