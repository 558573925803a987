/** `autocompact tune`: replays conversations under a grid of D50 configurations and ranks them. */
import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify as toToml } from "smol-toml";
import { type AutoConfigLayer, resolveAutoConfig, toConfigTree } from "../../core/config.ts";
import { InvalidInputError } from "../../core/errors.ts";
import { entryChars } from "../../core/estimate.ts";
import { type Entry, parseStream } from "../../core/events.ts";
import {
  PRICING_NAMES,
  PRICING_PROFILES,
  type Prices,
  type PricingName,
  parsePrices,
  tablePrices,
} from "../../core/prices.ts";
import { type PreparedStream, prepareStream } from "../../core/replay.ts";
import {
  type Billing,
  type ConfigResult,
  type ConversationMetrics,
  cachedSummaries,
  conversationDollars,
  rankResults,
  STAND_IN_SUMMARY_RATIO,
  standInSummary,
  summarizeConfig,
  tuneConversation,
} from "../../core/tune.ts";
import {
  configExtras,
  configLayer,
  DEFAULT_TUNE_CONFIG,
  expandGrid,
  type Grid,
  isDefaultConfig,
  parseGrid,
  type TuneConfig,
} from "../../core/tune-grid.ts";
import {
  type Bill,
  type Candidate,
  classify,
  describeConfig,
  type TuneSummary,
  tuneVerdict,
} from "../../core/tune-verdict.ts";
import { SERVICE_HELP, serviceClient, TIMEOUT_OPTION } from "../client.ts";
import { defineCommand, EXIT, type Io, UsageError, write } from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, loadStream } from "../input.ts";
import {
  CALIBRATION_HELP,
  CALIBRATION_OPTIONS,
  CONFIG_OPTIONS,
  calibrationOf,
  configLayers,
  MODEL_HELP,
  MODEL_OPTIONS,
  requiredContextWindow,
} from "../options.ts";
import { SUMMARIZER_HELP, SUMMARIZER_OPTIONS, summarizeFromOptions } from "../summarizer.ts";
import { tuneHtml } from "../tune-html.ts";

const OPTIONS = {
  ...FORMAT_OPTION,
  ...MODEL_OPTIONS,
  config: CONFIG_OPTIONS.config,
  ...SUMMARIZER_OPTIONS,
  ...CALIBRATION_OPTIONS,
  grid: { type: "string", multiple: true },
  json: { type: "boolean" },
  html: { type: "string" },
  "cache-read-price": { type: "string" },
  pricing: { type: "string" },
  prices: { type: "string" },
  "min-retention": { type: "string" },
  url: { type: "string" },
  key: { type: "string" },
  conversation: { type: "string", short: "c", multiple: true },
  ...TIMEOUT_OPTION,
} as const;

const USAGE = `Usage: autocompact tune FILES|DIR... --context-window N [--model ID]
                       [--grid KEY=VALUES]... [--json] [--html F]
                       [--pricing P] [--prices input=USD,output=USD[,…]]
                       [--min-retention R] [--cache-read-price P] [--config F]...
                       [--summarizer …] [--tokens-per-char A] [--overhead B]
       autocompact tune --conversation ID... --context-window N [--url URL] [--key KEY] …

Replays every conversation under every configuration of a grid, turn by turn,
with the D50 step the service runs (the same code as simulate), and bills it
call by call (docs/tuning.md): a turn makes one call per model response, each
sending the overhead, the view after the previous turn's evaluation and the
turn so far; a call reads from the prompt cache its common prefix (whole
events) with the previous call when that was within the cache's lifetime and
the prefix reaches the provider's minimum, and writes the rest. Per
configuration, summed over the conversations:
  firings, over      bands appended; of those, still over the threshold after
  1-turn, run        one-turn bands; the most consecutive turns that fired
  calls, overflow    model calls; calls whose input is over the window
  retention          mean over calls of the share of the raw history in the view
  cache read/write   input tokens read from the cache / written (uncached)
  output             the responses' tokens
  dollars            writes and reads at the profile's multiples of the input
                     price, output at the output price, a summary's tokens at
                     the summarizer's prices
The table is sorted by dollars; * marks the Pareto front of dollars against
overflowing calls. The recommendation: the fewest dollars among the
configurations with the fewest overflowing calls, retention at least
--min-retention and keep_last 1 or more (never compacting the turn just
finished), printed as TOML and as the PUT /v1/conversations/{id}/config body.
None is given when fewer than 5 conversations fire, or when the runner-up ties
(costs no more in 5% of resamples of the conversations); a best value on the
edge of a swept range is named with the way to widen it. The saving against
D50's default comes with a 90% bootstrap interval (seeded: the same every run),
and tool-heavy conversations (half their bytes in tool results) and the others
get their own recommendation when it differs.

  --grid KEY=VALUES      replaces one key's values (repeatable; several KEY=VALUES
                         may share one argument, separated by spaces or ";"):
                           trigger_ratio  0.5:0.9:0.05 (default) or 0.6,0.7
                           keep_first     0..2 (default) or 0,1
                           keep_last      1..5 (default)
                           reasoning      strip (default), keep
                           tool_calls     strip,omit (default), strip-requests,
                                          strip-responses, keep
                           summary        off (default), on: the summary rule
                           reserve_tokens, min_gain_tokens  whole tokens, e.g. 0,8000
                           min_band_turns 1 or more, e.g. 1..4
                           when           turn, idle (fire after the turn, or once
                                          the conversation rests idle_seconds)
                           idle_seconds   30 to 3600, e.g. 300,900
                           hard_ratio     e.g. 0.85,0.95 (fires at once past it;
                                          with when=turn these two are not varied)
                           tokens_per_char, overhead_tokens  the calibration flags
                         (not varied unless named: --config's values, the flags',
                         or D50's defaults apply)
  --pricing P            anthropic-5m (default: write 1.25x, read 0.1x, 300 s,
                         1,024 tokens at least), anthropic-1h (2x, 0.1x, 3,600 s),
                         openai (1x, 0.1x, 600 s), none (no cache)
  --prices input=USD,output=USD[,summary_input=USD,summary_output=USD]
                         per million tokens; default: the bundled dated table's
                         prices for --model (core/prices.ts), else claude-sonnet-4-5's
  --min-retention R      the least retention a recommendation keeps (default 0.2)
  --cache-read-price P   the cached token's price in effective_input_cost, the
                         per-view figure kept from before (default 0.1)
  --json                 one JSON line per configuration instead of the table:
                           {"config","conversations","turns","firings","peak_utilization",
                            "overflow_turns","input_tokens","cache_miss_tokens",
                            "effective_input_cost","summary_input_tokens"?,
                            "summary_output_tokens"?,"calls","cache_read_tokens",
                            "cache_write_tokens","output_tokens","dollars",
                            "overflow_calls","still_over_firings","one_turn_bands",
                            "longest_firing_run","retention","pareto","recommended"}
                         then {"summary":{"recommended","reason","warnings":[{"code",
                         "detail"}],"saving_vs_default":{"median","p05","p95",
                         "win_share"},"classes":[{"class","conversations","recommended"}]}}
                         (codes grid_edge, tie, too_few_firing)
  --html F               write one self-contained page (no network, no script)
                         with the verdict, the TOML, dollars against trigger_ratio
                         per rule, the table with its columns defined, and each
                         conversation's input per call with window and threshold
  --config F             base layers under the grid (e.g. min_turns, reserve_tokens,
                         min_band_turns, a summary block's instructions); the
                         grid's keys win
${CALIBRATION_HELP}
                         (tokens, peak, input and cache miss in those tokens;
                         the overhead is a cached prefix of every call)
${MODEL_HELP}
                         (one of the two is required)

Summary rule (summary=on): with --summarizer each band is summarized once and
reused by every configuration that fires it. Without one, a stand-in text of
${STAND_IN_SUMMARY_RATIO * 100}% of the band's characters is used and the figures are labelled estimates.
${SUMMARIZER_HELP}

Inputs: files, or directories searched for *.json (only events.json files when
there are any, as in JP's .jp/conversations/; hidden folders skipped); or the
conversations of a running service with --conversation (repeatable). Automatic
bands already in a stream are dropped: tune replays the rule itself.
${INPUT_HELP.replace(/^Input:\n.*\n.*\n.*\n.*\n/, "")}
${SERVICE_HELP.replace("-c, --conversation ID  the conversation id", "-c, --conversation ID  a conversation of the service (repeatable)")}

A progress bar goes to stderr when it is a terminal.

Example:
  autocompact tune .jp/conversations --context-window 200000 --html tune.html
  autocompact tune runs/ --model claude-sonnet-4-5 --grid "keep_first=1 tool_calls=omit" --json

Exit codes: 0 ok, 1 bad input, 2 bad usage.`;

/** The files a path names: itself, or the stream files under a directory. */
async function streamFiles(path: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw new InvalidInputError(`cannot read ${path}: no such file or directory`, {
      cause: error,
    });
  }
  if (!info.isDirectory()) return [path];
  const found: string[] = [];
  const walk = async (dir: string) => {
    const children = await readdir(dir, { withFileTypes: true });
    for (const child of children.sort((a, b) => a.name.localeCompare(b.name))) {
      if (child.name.startsWith(".")) continue;
      const full = join(dir, child.name);
      if (child.isDirectory()) await walk(full);
      else if (child.name.endsWith(".json")) found.push(full);
    }
  };
  await walk(path);
  const events = found.filter((file) => file.endsWith("/events.json"));
  const files = events.length > 0 ? events : found;
  if (files.length === 0) throw new InvalidInputError(`${path}: no .json files in it`);
  return files;
}

/** A conversation to tune: its name and its stream without automatic bands. */
interface Conversation {
  readonly name: string;
  readonly prepared: PreparedStream;
}

function withoutAutoBands(entries: readonly Entry[]): Entry[] {
  return entries.filter(
    (entry) => !(entry.type === "compaction" && (entry as { source?: string }).source === "auto"),
  );
}

async function loadConversations(
  positionals: readonly string[],
  values: Parameters<typeof loadStream>[1] & {
    conversation?: string[] | undefined;
    url?: string | undefined;
    key?: string | undefined;
    timeout?: string | undefined;
  },
  io: Io,
): Promise<Conversation[]> {
  const conversations: Conversation[] = [];
  for (const path of positionals) {
    for (const file of await streamFiles(path)) {
      const entries = await loadStream([file], values, io);
      conversations.push({ name: file, prepared: prepareStream(withoutAutoBands(entries)) });
    }
  }
  if (values.conversation?.length) {
    const client = serviceClient(values, io);
    for (const id of values.conversation) {
      const { events } = await client.events(id);
      const parsed = parseStream(events);
      if (!parsed.ok) throw new InvalidInputError(`conversation ${id}: unreadable stream`);
      conversations.push({ name: id, prepared: prepareStream(withoutAutoBands(parsed.entries)) });
    }
  }
  if (conversations.length === 0) {
    throw new UsageError("give stream files, a directory, or --conversation ID");
  }
  return conversations;
}

function cacheReadPrice(value: string | undefined): number {
  if (value === undefined) return 0.1;
  const price = Number(value);
  if (value.trim() === "" || !Number.isFinite(price) || price < 0 || price > 1) {
    throw new UsageError(`--cache-read-price must be a number in [0, 1] (got "${value}")`);
  }
  return price;
}

/** A progress bar on a terminal's stderr; nothing elsewhere (logs, pipes, tests). */
function progress(io: Io, total: number): (done: number) => void {
  if (!(io.stderr as { isTTY?: boolean }).isTTY) return () => {};
  let shown = -1;
  return (done) => {
    const percent = Math.floor((done / total) * 100);
    if (percent === shown && done < total) return;
    shown = percent;
    const filled = Math.round((done / total) * 30);
    io.stderr.write(
      `\rtune [${"#".repeat(filled)}${" ".repeat(30 - filled)}] ${percent}% ${done}/${total}${done === total ? "\n" : ""}`,
    );
  };
}

/** The auto layer of a configuration without `null`s, which TOML cannot hold. */
function tomlBlock(config: TuneConfig): string {
  const layer = configLayer(config);
  const rule = Object.fromEntries(
    Object.entries(layer.rule ?? {}).filter(([, value]) => value !== null),
  );
  // No summary is the default: only a policy turned off needs saying.
  const cleared = Object.entries(layer.rule ?? {})
    .filter(([key, value]) => value === null && key !== "summary")
    .map(([key]) => key);
  const note = cleared.length
    ? `# ${cleared.join(", ")}: off (TOML has no null: set ${cleared.map((k) => `"${k}": null`).join(", ")} in JSON)\n`
    : "";
  return `${note}${toToml(toConfigTree({ ...layer, rule }))}`;
}

const number = (value: number, digits: number) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A configuration's extra keys as `reserve_tokens 8000, min_band_turns 3` ("" without). */
function extrasText(config: TuneConfig, separator = ", "): string {
  return Object.entries(configExtras(config))
    .map(([key, value]) => `${key} ${value}`)
    .join(separator);
}

function table(results: readonly ConfigResult[], standIn: boolean): string {
  // An extra keys column only when the grid varied one.
  const extras = results.some((r) => Object.keys(configExtras(r.config)).length > 0);
  const fixed = extras ? 5 : 4;
  const header = [
    "ratio",
    "first",
    "last",
    "rule",
    ...(extras ? ["keys"] : []),
    "firings",
    "over",
    "1-turn",
    "run",
    "calls",
    "overflow",
    "retention",
    "cache read",
    "cache write",
    "output",
    standIn ? "dollars (est.)" : "dollars",
    "",
  ];
  const rows = results.map((r) => [
    String(r.config.trigger_ratio),
    String(r.config.keep_first),
    String(r.config.keep_last),
    r.config.summary
      ? "summary"
      : `${r.config.reasoning ? "r" : "-"}/${r.config.tool_calls ?? "keep"}`,
    ...(extras ? [extrasText(r.config, " ") || "-"] : []),
    String(r.firings),
    String(r.still_over_firings),
    String(r.one_turn_bands),
    String(r.longest_firing_run),
    String(r.calls),
    String(r.overflow_calls),
    number(r.retention, 3),
    number(r.cache_read_tokens, 0),
    number(r.cache_write_tokens, 0),
    number(r.output_tokens, 0),
    number(r.dollars, 2),
    `${r.pareto ? "*" : ""}${r.recommended ? " recommended" : ""}${isDefaultConfig(r.config) ? " default" : ""}`,
  ]);
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < fixed ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** The verdict in words: the recommendation or why there is none, the saving, warnings, classes. */
function verdictText(summary: TuneSummary): string[] {
  const lines = summary.recommended
    ? [`Recommended: ${describeConfig(summary.recommended)}`, `  because: ${summary.reason}`]
    : [`No single recommendation: ${summary.reason}`];
  const saving = summary.saving_vs_default;
  if (saving) {
    lines.push(
      `  saving against D50's default: ${percent(saving.median)} (90% interval ${percent(saving.p05)} to ${percent(saving.p95)}, resampling conversations; it wins in ${percent(saving.win_share)} of resamples)`,
    );
  }
  for (const warning of summary.warnings)
    lines.push(`Warning (${warning.code}): ${warning.detail}`);
  for (const group of summary.classes) {
    if (sameConfig(group.recommended, summary.recommended)) continue;
    lines.push(
      `Class ${group.class} (${group.conversations} conversation(s)): ${group.recommended ? describeConfig(group.recommended) : "no single recommendation"}`,
    );
  }
  return lines;
}

const sameConfig = (a: TuneConfig | null, b: TuneConfig | null) =>
  JSON.stringify(a) === JSON.stringify(b);

/** `--pricing` and `--prices`, or the price table's prices for `--model`. */
function billingOf(values: { pricing?: string; prices?: string; model?: string }): Billing {
  const name = values.pricing ?? "anthropic-5m";
  if (!(PRICING_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--pricing must be one of ${PRICING_NAMES.join(", ")} (got "${name}")`);
  }
  let prices: Prices;
  try {
    prices = values.prices === undefined ? tablePrices(values.model) : parsePrices(values.prices);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(error.message);
    throw error;
  }
  return { profile: PRICING_PROFILES[name as PricingName], prices };
}

function minRetention(value: string | undefined): number {
  if (value === undefined) return 0.2;
  const share = Number(value);
  if (value.trim() === "" || !Number.isFinite(share) || share < 0 || share > 1) {
    throw new UsageError(`--min-retention must be a number in [0, 1] (got "${value}")`);
  }
  return share;
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const contextWindow = requiredContextWindow(values);
  if (values.html === "") throw new UsageError("--html needs a file path");
  const price = cacheReadPrice(values["cache-read-price"]);
  const billing = billingOf(values);
  const retention = minRetention(values["min-retention"]);
  let configs: TuneConfig[];
  let grid: Grid;
  const layers: AutoConfigLayer[] = await configLayers({ config: values.config });
  const base = resolveAutoConfig(...layers, { enabled: true });
  try {
    grid = parseGrid(values.grid ?? []);
    configs = expandGrid(grid, base.rule.summary ?? {});
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(error.message);
    throw error;
  }
  const calibration = calibrationOf(values);
  const summarize = await summarizeFromOptions(values, io.env);
  const standIn = !summarize && configs.some((config) => config.summary);
  const conversations = await loadConversations(positionals, values, io);
  const summarizers = conversations.map(() => cachedSummaries(summarize ?? standInSummary));
  const runOne = (config: TuneConfig, index: number, curves = false) =>
    tuneConversation((conversations[index] as Conversation).prepared, config, {
      contextWindow,
      layers,
      curves,
      profile: billing.profile,
      ...(calibration ? { calibration } : {}),
      ...(config.summary ? { summarize: summarizers[index] } : {}),
    });
  const runAll = (config: TuneConfig, curves = false) =>
    Promise.all(conversations.map((_, i) => runOne(config, i, curves)));
  const billsOf = (metrics: readonly ConversationMetrics[]): Bill[] =>
    metrics.map((m) => ({ ...m, dollars: conversationDollars(m, billing) }));

  const tick = progress(io, configs.length * conversations.length);
  const results: ConfigResult[] = [];
  const candidates: Candidate[] = [];
  let done = 0;
  for (const config of configs) {
    const metrics: ConversationMetrics[] = [];
    for (let i = 0; i < conversations.length; i++) {
      metrics.push(await runOne(config, i));
      tick(++done);
    }
    results.push(summarizeConfig(config, metrics, contextWindow, price, billing));
    candidates.push({ config, bills: billsOf(metrics) });
  }
  const inGrid = candidates.find((c) => isDefaultConfig(c.config));
  const summary = tuneVerdict(candidates, {
    minRetention: retention,
    grid,
    defaults: inGrid?.bills ?? billsOf(await runAll(DEFAULT_TUNE_CONFIG)),
    classes: conversations.map((c) => classify(c.prepared.entries, entryChars)),
  });
  rankResults(results, summary.recommended);
  const recommended = results.find((result) => result.recommended);

  if (values.json) {
    const lines = [...results, { summary }].map((line) => JSON.stringify(line));
    await write(io.stdout, `${lines.join("\n")}\n`);
  } else {
    const defaults = results.find((result) => isDefaultConfig(result.config));
    const text = [
      `tune: ${conversations.length} conversation(s), ${results[0]?.turns ?? 0} turns, ${configs.length} configurations, window ${contextWindow} tokens, pricing ${billing.profile.name}, $${billing.prices.input}/$${billing.prices.output} per million input/output tokens (${billing.prices.source})${calibration?.kind === "fixed" ? `, tokens ${calibration.tokens_per_char}·chars + ${calibration.overhead_tokens}` : ""}`,
      ...(standIn
        ? [
            `summary rule costs are ESTIMATES: offline stand-in summaries of ${STAND_IN_SUMMARY_RATIO * 100}% of each band (give --summarizer for real ones)`,
          ]
        : []),
      "",
      table(results, standIn),
      "",
      ...verdictText(summary),
      ...(recommended
        ? [
            `  $${number(recommended.dollars, 2)}, ${recommended.overflow_calls} overflowing calls, retention ${number(recommended.retention, 3)}${defaults ? ` (the D50 default: $${number(defaults.dollars, 2)}, ${defaults.overflow_calls} overflowing calls)` : ""}`,
            "",
            "As TOML (a service config file, or --config):",
            tomlBlock(recommended.config).trimEnd(),
            "",
            "As the body of PUT /v1/conversations/{id}/config:",
            JSON.stringify(toConfigTree(configLayer(recommended.config))),
          ]
        : []),
    ];
    await write(io.stdout, `${text.join("\n")}\n`);
  }

  if (values.html !== undefined) {
    const page = tuneHtml({
      results,
      summary,
      contextWindow,
      names: conversations.map((c) => c.name),
      shown: await runAll(recommended?.config ?? DEFAULT_TUNE_CONFIG, true),
      shownConfig: recommended?.config ?? DEFAULT_TUNE_CONFIG,
      toml: recommended ? tomlBlock(recommended.config) : undefined,
      billing,
      standIn,
    });
    try {
      await writeFile(values.html, page);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new InvalidInputError(`cannot write ${values.html}: ${reason}`, { cause: error });
    }
  }
  return EXIT.ok;
});
