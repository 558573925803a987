/** `autocompact tune`: replays conversations under a grid of D50 configurations and ranks them. */
import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify as toToml } from "smol-toml";
import { type AutoConfigLayer, resolveAutoConfig, toConfigTree } from "../../core/config.ts";
import { InvalidInputError } from "../../core/errors.ts";
import { type Entry, parseStream } from "../../core/events.ts";
import { type PreparedStream, prepareStream } from "../../core/replay.ts";
import {
  type ConfigResult,
  type ConversationMetrics,
  cachedSummaries,
  rankCost,
  rankResults,
  STAND_IN_SUMMARY_RATIO,
  standInSummary,
  summarizeConfig,
  tuneConversation,
} from "../../core/tune.ts";
import {
  configGuards,
  configLayer,
  DEFAULT_TUNE_CONFIG,
  expandGrid,
  isDefaultConfig,
  parseGrid,
  type TuneConfig,
} from "../../core/tune-grid.ts";
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
  url: { type: "string" },
  key: { type: "string" },
  conversation: { type: "string", short: "c", multiple: true },
  ...TIMEOUT_OPTION,
} as const;

const USAGE = `Usage: autocompact tune FILES|DIR... --context-window N [--model ID]
                       [--grid KEY=VALUES]... [--json] [--html F]
                       [--cache-read-price P] [--config F]... [--summarizer …]
                       [--tokens-per-char A] [--overhead B]
       autocompact tune --conversation ID... --context-window N [--url URL] [--key KEY] …

Replays every conversation under every configuration of a grid, turn by turn,
with the D50 step the service runs (the same code as simulate), and reports per
configuration, summed over the conversations:
  firings            bands appended (and per 100 turns)
  peak               the largest view the calls of a turn see (U_t), over the window
  overflow           turns whose U_t exceeds the window
  input              tokens billed: the sum of the views sent after each turn (V_t)
  cache miss         of those, the tokens after each view's longest common prefix
                     with the previous view (a band changes the prompt from its
                     first turn on, so the provider's cache is lost from there)
  cost               cache miss + P x (input - cache miss), plus a summary rule's
                     summarizer tokens in and out
The table is sorted by cost; * marks the Pareto front of cost against peak. The
recommendation is the cheapest configuration without overflow turns (when all
overflow: the fewest overflow turns, then the cheapest), printed as TOML and as
the PUT /v1/conversations/{id}/config body.

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
                         (the guards, issue 26: not varied unless named, so
                         --config's values, D50's defaults without, apply)
  --cache-read-price P   a cached input token's price relative to an uncached one
                         (default 0.1)
  --json                 one JSON line per configuration instead of the table:
                           {"config","conversations","turns","firings","peak_utilization",
                            "overflow_turns","input_tokens","cache_miss_tokens",
                            "effective_input_cost","summary_input_tokens"?,
                            "summary_output_tokens"?,"pareto","recommended"}
  --html F               write one self-contained page (no network) with the
                         cost/peak scatter and each conversation's size per turn
                         under the recommended and the default configuration
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

/** A configuration's guards as `reserve_tokens 8000, min_band_turns 3` ("" without). */
function guardsText(config: TuneConfig, separator = ", "): string {
  return Object.entries(configGuards(config))
    .map(([key, value]) => `${key} ${value}`)
    .join(separator);
}

function describe(config: TuneConfig): string {
  const rule = config.summary
    ? "summary"
    : `reasoning ${config.reasoning ?? "keep"}, tool_calls ${config.tool_calls ?? "keep"}`;
  const guards = guardsText(config);
  return `trigger_ratio ${config.trigger_ratio}, keep_first ${config.keep_first}, keep_last ${config.keep_last}, ${rule}${guards ? `, ${guards}` : ""}`;
}

function table(results: readonly ConfigResult[], standIn: boolean): string {
  // A guards column only when the grid varied one.
  const guarded = results.some((r) => Object.keys(configGuards(r.config)).length > 0);
  const fixed = guarded ? 5 : 4;
  const header = [
    "ratio",
    "first",
    "last",
    "rule",
    ...(guarded ? ["guards"] : []),
    "firings",
    "/100t",
    "peak",
    "overflow",
    "input",
    "cache miss",
    standIn ? "cost (est.)" : "cost",
    "",
  ];
  const rows = results.map((r) => [
    String(r.config.trigger_ratio),
    String(r.config.keep_first),
    String(r.config.keep_last),
    r.config.summary
      ? "summary"
      : `${r.config.reasoning ? "r" : "-"}/${r.config.tool_calls ?? "keep"}`,
    ...(guarded ? [guardsText(r.config, " ") || "-"] : []),
    String(r.firings),
    number((r.firings / Math.max(1, r.turns)) * 100, 1),
    number(r.peak_utilization, 3),
    String(r.overflow_turns),
    number(r.input_tokens, 0),
    number(r.cache_miss_tokens, 0),
    number(rankCost(r), 0),
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

function perConversation(
  names: readonly string[],
  metrics: readonly ConversationMetrics[],
  window: number,
): string {
  return metrics
    .map(
      (m, i) =>
        `  ${names[i]}: ${m.turns} turns, ${m.firings} firings, peak ${number(m.peak_tokens / window, 3)}, ${m.overflow_turns} overflow, input ${number(m.input_tokens, 0)}, cache miss ${number(m.cache_miss_tokens, 0)}`,
    )
    .join("\n");
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const contextWindow = requiredContextWindow(values);
  if (values.html === "") throw new UsageError("--html needs a file path");
  const price = cacheReadPrice(values["cache-read-price"]);
  let configs: TuneConfig[];
  const layers: AutoConfigLayer[] = await configLayers({ config: values.config });
  const base = resolveAutoConfig(...layers, { enabled: true });
  try {
    configs = expandGrid(parseGrid(values.grid ?? []), base.rule.summary ?? {});
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
      ...(calibration ? { calibration } : {}),
      ...(config.summary ? { summarize: summarizers[index] } : {}),
    });

  const tick = progress(io, configs.length * conversations.length);
  const results: ConfigResult[] = [];
  let done = 0;
  for (const config of configs) {
    const metrics: ConversationMetrics[] = [];
    for (let i = 0; i < conversations.length; i++) {
      metrics.push(await runOne(config, i));
      tick(++done);
    }
    results.push(summarizeConfig(config, metrics, contextWindow, price));
  }
  rankResults(results);
  const recommended = results.find((result) => result.recommended) as ConfigResult;

  if (values.json) {
    await write(io.stdout, `${results.map((result) => JSON.stringify(result)).join("\n")}\n`);
  } else {
    const names = conversations.map((c) => c.name);
    const detail = await Promise.all(conversations.map((_, i) => runOne(recommended.config, i)));
    const defaults = results.find((result) => isDefaultConfig(result.config));
    const versus = defaults
      ? ` (the D50 default configuration: ${number(rankCost(defaults), 0)}, ${defaults.overflow_turns} overflow turns)`
      : "";
    const text = [
      `tune: ${conversations.length} conversation(s), ${recommended.turns} turns, ${configs.length} configurations, window ${contextWindow} tokens, cache read price ${price}${calibration?.kind === "fixed" ? `, tokens ${calibration.tokens_per_char}·chars + ${calibration.overhead_tokens}` : ""}`,
      ...(standIn
        ? [
            `summary rule costs are ESTIMATES: offline stand-in summaries of ${STAND_IN_SUMMARY_RATIO * 100}% of each band (give --summarizer for real ones)`,
          ]
        : []),
      "",
      table(results, standIn),
      "",
      `Recommended: ${describe(recommended.config)}`,
      `  cost ${number(rankCost(recommended), 0)}, peak ${number(recommended.peak_utilization, 3)}, ${recommended.overflow_turns} overflow turns${versus}`,
      perConversation(names, detail, contextWindow),
      "",
      "As TOML (a service config file, or --config):",
      tomlBlock(recommended.config).trimEnd(),
      "",
      "As the body of PUT /v1/conversations/{id}/config:",
      JSON.stringify(toConfigTree(configLayer(recommended.config))),
    ];
    await write(io.stdout, `${text.join("\n")}\n`);
  }

  if (values.html !== undefined) {
    const defaultConfig = DEFAULT_TUNE_CONFIG;
    const curves = async (config: TuneConfig) =>
      Promise.all(conversations.map((_, i) => runOne(config, i, true)));
    const page = tuneHtml({
      results,
      contextWindow,
      names: conversations.map((c) => c.name),
      recommended: { config: recommended.config, metrics: await curves(recommended.config) },
      defaults: { config: defaultConfig, metrics: await curves(defaultConfig) },
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
