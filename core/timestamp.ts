/**
 * Timestamps on the wire are RFC 3339; JP stores `2026-03-18 13:19:07.360486`
 * (UTC, no zone). Both are accepted; output is always canonical RFC 3339 in UTC.
 * Ordering uses integer nanoseconds so sub-millisecond precision (JP writes
 * microseconds) decides "latest wins" correctly, which `Date` cannot.
 * A leap second (`23:59:60Z`) is accepted and stored as `23:59:59.999999999Z`.
 */

import { InvalidInputError, PROBLEM_VARIANTS } from "./errors.ts";

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))?$/;

const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * The instants a timestamp may denote once in UTC: years 0001 to 9999. Past
 * them `toISOString` writes six signed digits, so the canonical form would be
 * neither RFC 3339 nor complete (`+010000-01-01T00:30`, its seconds lost);
 * year 0 is refused too, as readers such as Python's `datetime` start at 0001.
 */
const EARLIEST_SECONDS = -62_135_596_800n; // 0001-01-01T00:00:00Z
const LATEST_SECONDS = 253_402_300_799n; // 9999-12-31T23:59:59Z

/** Parses an RFC 3339 or JP-stored timestamp into nanoseconds since the Unix epoch. */
export function timestampNanos(text: string): bigint {
  const match = TIMESTAMP.exec(text);
  if (!match) {
    throw new InvalidInputError(
      `invalid timestamp "${text}": expected RFC 3339 (2026-03-18T13:19:07.360486Z) or JP's form (2026-03-18 13:19:07.360486)`,
      PROBLEM_VARIANTS.invalidTimestamp,
    );
  }
  const [, y, mo, d, h, mi, s, fraction = "", sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear takes them as written.
  // Built in 2000, a leap year, so a 29 February survives until the real year
  // is set, and moves to 1 March if that year has none.
  // A leap second is read as second 59 here, and checked once the offset is applied.
  const leap = second === 60;
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, leap ? 59 : second));
  date.setUTCFullYear(year);
  // With the time in range, an impossible date (a day 00 or past the month's
  // end, a month 00 or 13 and up) rolls into another month.
  if (hour > 23 || minute > 59 || second > 60 || date.getUTCMonth() !== month - 1) {
    throw new InvalidInputError(
      `invalid timestamp "${text}": date or time out of range`,
      PROBLEM_VARIANTS.invalidTimestamp,
    );
  }
  let offsetSeconds = 0;
  if (sign) {
    const offsetHour = Number(oh);
    const offsetMinute = Number(om);
    if (offsetHour > 23 || offsetMinute > 59)
      throw new InvalidInputError(
        `invalid timestamp "${text}": zone offset out of range`,
        PROBLEM_VARIANTS.invalidTimestamp,
      );
    offsetSeconds = (sign === "-" ? -1 : 1) * (offsetHour * 3600 + offsetMinute * 60);
  }
  const seconds = BigInt(date.getTime() / 1000 - offsetSeconds);
  if (seconds < EARLIEST_SECONDS || seconds > LATEST_SECONDS) {
    const year = new Date(Number(seconds) * 1000).getUTCFullYear();
    throw new InvalidInputError(
      `invalid timestamp "${text}": in UTC it falls in year ${year}; years 0001 to 9999 only`,
      PROBLEM_VARIANTS.invalidTimestamp,
    );
  }
  if (leap) return leapSecondNanos(text, seconds);
  const nanos = BigInt(fraction.padEnd(9, "0"));
  return seconds * NANOS_PER_SECOND + nanos;
}

/**
 * A leap second (RFC 3339 §5.6, second 60) where one can be: the last second
 * of a UTC month, `23:59:60Z` on its last day (`15:59:60-08:00` and the like
 * once the offset is applied; no table of the leap seconds IERS announced).
 * Epoch time has no 61st second, so the whole of it (any fraction) is read as
 * the last nanosecond before the next minute, `23:59:59.999999999Z`: it sorts
 * after every earlier instant and before the month's first one, and is stored
 * in that canonical form (its fraction is not kept). `secondBefore` is the
 * UTC epoch second of `…:59` on the same local minute.
 */
function leapSecondNanos(text: string, secondBefore: bigint): bigint {
  const next = new Date(Number(secondBefore + 1n) * 1000);
  if (next.getUTCHours() !== 0 || next.getUTCMinutes() !== 0 || next.getUTCDate() !== 1) {
    throw new InvalidInputError(
      `invalid timestamp "${text}": a leap second (second 60) is only 23:59:60 UTC on a month's last day`,
      PROBLEM_VARIANTS.invalidTimestamp,
    );
  }
  return secondBefore * NANOS_PER_SECOND + (NANOS_PER_SECOND - 1n);
}

/** Formats epoch nanoseconds as canonical RFC 3339 UTC (microseconds, or nanoseconds when needed). */
export function formatTimestamp(nanos: bigint): string {
  // Floor division, so instants before 1970 keep a non-negative fraction.
  let seconds = nanos / NANOS_PER_SECOND;
  let rest = nanos % NANOS_PER_SECOND;
  if (rest < 0n) {
    rest += NANOS_PER_SECOND;
    seconds -= 1n;
  }
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  const fraction =
    rest % 1000n === 0n ? String(rest / 1000n).padStart(6, "0") : String(rest).padStart(9, "0");
  return `${base}.${fraction}Z`;
}

/** The value of the `count` ASCII digits of `text` from `at`, or -1 when one is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 48; // "0"
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The canonical form of the two shapes nearly every stream holds, without the
 * regular expression, `Date` and bigint work of the general path (77 ms, 4%,
 * of a profiled `autocompact estimate` on the 74 MB JP stream of `npm run
 * bench -- cli`; 10 ms with this): text already canonical
 * (`2026-03-18T13:19:07.360486Z`, or nine fraction digits not ending in 000),
 * returned as it is, and JP's stored form with microseconds
 * (`2026-03-18 13:19:07.360486`), whose canonical form only swaps the
 * separator and adds the zone. Checked exactly: every field in range, the day
 * within its month, no year 0000. Anything else, valid or not, is
 * `undefined`, left to the general path.
 */
export function fastCanonicalTimestamp(text: string): string | undefined {
  const { length } = text;
  const jp = length === 26;
  if (jp ? text.charCodeAt(10) !== 32 : length !== 27 && length !== 30) return undefined; // " "
  if (!jp && (text.charCodeAt(10) !== 84 || text.charCodeAt(length - 1) !== 90)) return undefined; // "T", "Z"
  if (
    text.charCodeAt(4) !== 45 || // "-"
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(13) !== 58 || // ":"
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46 // "."
  ) {
    return undefined;
  }
  const fractionDigits = jp ? 6 : length - 21;
  const fraction = digitsAt(text, 20, fractionDigits);
  // Nine digits ending in 000 are written canonically with six.
  if (fraction < 0 || (fractionDigits === 9 && fraction % 1000 === 0)) return undefined;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return undefined;
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day > days) return undefined;
  return jp ? `${text.slice(0, 10)}T${text.slice(11)}Z` : text;
}

/** Normalizes any accepted timestamp form to canonical RFC 3339 UTC. */
export function canonicalTimestamp(text: string): string {
  return fastCanonicalTimestamp(text) ?? formatTimestamp(timestampNanos(text));
}
