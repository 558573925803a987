/**
 * Materialized bands: the projected form of a band's turns
 * (core/materialize.ts states the form), written with the band, so the view reads the head, the bands' forms and the raw turns
 * outside them, and the bytes it reads follow the answer's.
 *
 * A band is written with its form when the writer read its turns anyway (a
 * summary's); any other gets it on the first read of the view that reads its
 * raw turns, so a firing reads no turn for its form.
 *
 * A form holds while the compactions covering its turns are exactly the ones
 * it was built under (`covering`, each `key@seq`: a key written again after a
 * removal has another seq). A band added over its turns, or one of them
 * removed, and it no longer holds: those turns are read raw again. So a
 * reset or a removal stays exact with no form rewritten, and stacked bands
 * (manual over auto) read the stacked band's form and the raw turns of the
 * older band's it no longer covers alone.
 */
import type { Entry } from "../../core/events.ts";
import { materializeTurns } from "../../core/materialize.ts";
import type {
  ConversationHead,
  ConversationRef,
  ConversationStore,
  MaterializedBand,
  StoredCompaction,
  StoredTurn,
} from "../ports.ts";
import type { Drift } from "./counters.ts";
import { interleave } from "./state.ts";

/** How a form names a compaction: its key and the version that wrote it. */
function bandId(compaction: StoredCompaction): string {
  return `${compaction.key}@${compaction.seq}`;
}

/** The compactions covering any of turns `from..to`, in stream order. */
function coveringOf(compactions: readonly StoredCompaction[], from: number, to: number) {
  return compactions.filter((c) => c.compaction.from_turn <= to && c.compaction.to_turn >= from);
}

/** The {@link MaterializedBand.covering} of turns `from..to` under `compactions`. */
function coveringIds(compactions: readonly StoredCompaction[], from: number, to: number) {
  return coveringOf(compactions, from, to).map(bandId).sort();
}

/** Whether `form` still holds under `compactions` (every compaction stored now). */
export function holds(form: MaterializedBand, compactions: readonly StoredCompaction[]): boolean {
  const now = coveringIds(compactions, form.from_turn, form.to_turn);
  return now.length === form.covering.length && now.every((id, i) => id === form.covering[i]);
}

/**
 * The form of `band`'s stored turns `turns` (exactly `from_turn` on, in
 * order) under `compactions` (every one stored, in stream order, `band`
 * among them), or `undefined` when a turn's tool calls pair across turns.
 */
function formOf(
  band: StoredCompaction,
  turns: readonly StoredTurn[],
  compactions: readonly StoredCompaction[],
): MaterializedBand | undefined {
  const from = band.compaction.from_turn;
  const to = from + turns.length - 1;
  if (turns.length === 0 || turns.some((turn, i) => turn.turn !== from + i)) return undefined;
  const covering = coveringOf(compactions, from, to);
  const form = materializeTurns(
    turns.map((turn) => turn.events),
    from,
    covering.map((c) => c.compaction),
  );
  if (!form) return undefined;
  return {
    key: band.key,
    from_turn: from,
    to_turn: to,
    covering: covering.map(bandId).sort(),
    turns: form,
  };
}

/**
 * The form to write with `band` (added to a head at `head`) from its turns
 * the writer already read (`read`: a summary's), or `undefined` when they are
 * not all its stored turns or a turn's tool calls pair across turns. A band
 * written with no turns read gets its form on the view's first read of its
 * raw turns ({@link readProjectable}): a firing reads no turn for it. An
 * automatic band starts past every compaction, so only its own covers its
 * turns and no list is read; any other reads `stored` (every compaction).
 */
export async function materializeBand(
  head: ConversationHead,
  band: StoredCompaction,
  read: readonly StoredTurn[],
  stored: () => Promise<readonly StoredCompaction[]>,
): Promise<MaterializedBand | undefined> {
  const from = band.compaction.from_turn;
  const to = Math.min(band.compaction.to_turn, head.turn_count - 1);
  const turns = read.filter((turn) => turn.turn >= from && turn.turn <= to);
  if (from > to || turns.length !== to - from + 1) return undefined;
  const others = from > head.max_compacted_turn ? [] : await stored();
  // The new band is the last in stream order: it was written after every other.
  return formOf(band, turns, [...others, band]);
}

/**
 * The forms of the bands in `compactions` that have none holding and whose
 * turns (up to the last of `raw`) are all in `raw`, the turns this read got
 * raw: built from them, so the next read need not read them.
 */
function lazyForms(
  compactions: readonly StoredCompaction[],
  forms: readonly MaterializedBand[],
  raw: ReadonlyMap<number, StoredTurn>,
  turnCount: number,
): { seq: number; form: MaterializedBand }[] {
  return compactions.flatMap((band) => {
    if (forms.some((form) => form.key === band.key && holds(form, compactions))) return [];
    const from = band.compaction.from_turn;
    const to = Math.min(band.compaction.to_turn, turnCount - 1);
    const turns: StoredTurn[] = [];
    for (let t = from; t <= to; t++) {
      const turn = raw.get(t);
      if (!turn) return [];
      turns.push(turn);
    }
    const form = formOf(band, turns, compactions);
    return form ? [{ seq: band.seq, form }] : [];
  });
}

/** The forms among `forms` that hold, in turn order, none overlapping another. */
function holding(
  forms: readonly MaterializedBand[],
  compactions: readonly StoredCompaction[],
): MaterializedBand[] {
  const out: MaterializedBand[] = [];
  for (const form of [...forms].sort((a, b) => a.from_turn - b.from_turn)) {
    const last = out.at(-1);
    if (last && form.from_turn <= last.to_turn) continue;
    if (holds(form, compactions)) out.push(form);
  }
  return out;
}

/**
 * A stream whose projection is the conversation's view: the raw stream, but
 * for the turns of every form that holds, which are their forms. It reads
 * the compactions, the forms, and the raw turns outside every holding form
 * (one range read per gap between them), nothing else; it writes the form
 * of each band whose turns it read raw and that has none holding.
 */
export async function readProjectable(
  store: ConversationStore,
  ref: ConversationRef,
): Promise<Entry[]> {
  const [compactions, forms] = await Promise.all([
    store.listCompactions(ref),
    store.listMaterialized(ref),
  ]);
  const held = holding(forms, compactions);
  const gaps: [number, number | undefined][] = [];
  let next = 0;
  for (const form of held) {
    if (form.from_turn > next) gaps.push([next, form.from_turn - 1]);
    next = form.to_turn + 1;
  }
  gaps.push([next, undefined]);
  const raw = (await Promise.all(gaps.map(([from, to]) => store.readTurns(ref, from, to)))).flat();
  const turns: (readonly Entry[])[] = [];
  for (const form of held) {
    for (const [i, events] of form.turns.entries()) turns[form.from_turn + i] = events;
  }
  for (const turn of raw) turns[turn.turn] = turn.events;
  // A turn missing (never stored) ends the stream, as a read of the raw turns would.
  // biome-ignore lint/complexity/useIndexOf: indexOf skips a sparse array's holes, which are the missing turns.
  const end = turns.findIndex((events) => events === undefined);
  const stream = end === -1 ? turns : turns.slice(0, end);
  // A band with no form yet (a strip firing writes none) gets one from the raw turns read here;
  // one removed meanwhile keeps none (the store's check).
  const built = lazyForms(
    compactions,
    forms,
    new Map(raw.map((turn) => [turn.turn, turn])),
    stream.length,
  );
  await Promise.all(built.map(({ seq, form }) => store.addMaterialized(ref, seq, form)));
  return interleave(
    stream.map((events) => events.slice()),
    compactions,
  );
}

/**
 * Verify's check of the forms: each one that holds, against its turns
 * materialized again from `stored` (every stored turn). A form that differs
 * is a drift of its JSON bytes.
 */
export function materializedDrift(
  forms: readonly MaterializedBand[],
  compactions: readonly StoredCompaction[],
  stored: readonly StoredTurn[],
): Drift[] {
  const turns = stored.map((turn) => turn.events);
  return holding(forms, compactions).flatMap((form) => {
    const again = materializeTurns(
      turns.slice(form.from_turn, form.to_turn + 1),
      form.from_turn,
      coveringOf(compactions, form.from_turn, form.to_turn).map((c) => c.compaction),
    );
    const stored = JSON.stringify(form.turns);
    const expected = again && again.length === form.turns.length ? JSON.stringify(again) : "";
    if (stored === expected) return [];
    return [
      { field: `materialized[${form.key}]`, stored: stored.length, expected: expected.length },
    ];
  });
}
