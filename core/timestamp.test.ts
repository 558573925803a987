import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { propertyRuns } from "../test/helpers/property.ts";
import { InvalidInputError } from "./errors.ts";
import {
  canonicalTimestamp,
  fastCanonicalTimestamp,
  formatTimestamp,
  timestampNanos,
} from "./timestamp.ts";

/** The error `timestampNanos` throws for `text`, as a log line shows it. */
function failure(text: string): string {
  try {
    timestampNanos(text);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ status: 400, type: "/problems/invalid-timestamp" });
    return String(error);
  }
  throw new Error(`"${text}" was accepted`);
}

describe("timestamps", () => {
  it("accept JP's stored form as UTC, with any fraction length", () => {
    expect(canonicalTimestamp("2026-03-18 13:19:07.360486")).toBe("2026-03-18T13:19:07.360486Z");
    expect(canonicalTimestamp("2026-03-05 19:31:45.7")).toBe("2026-03-05T19:31:45.700000Z");
    expect(canonicalTimestamp("2025-01-15 12:00:00.0")).toBe("2025-01-15T12:00:00.000000Z");
    expect(canonicalTimestamp("2026-03-18 13:19:07")).toBe("2026-03-18T13:19:07.000000Z");
  });

  it("accept RFC 3339 with offsets and nanoseconds", () => {
    expect(canonicalTimestamp("2026-03-18T15:19:07+02:00")).toBe("2026-03-18T13:19:07.000000Z");
    expect(canonicalTimestamp("2026-03-18T13:19:07.123456789Z")).toBe(
      "2026-03-18T13:19:07.123456789Z",
    );
  });

  it("accept the lower-case t and z RFC 3339 allows", () => {
    expect(canonicalTimestamp("2026-03-18t13:19:07.5z")).toBe("2026-03-18T13:19:07.500000Z");
  });

  it("apply offsets with minutes, east and west of UTC, up to ±23:59", () => {
    expect(canonicalTimestamp("2026-03-18T18:49:07+05:30")).toBe("2026-03-18T13:19:07.000000Z");
    expect(canonicalTimestamp("2026-03-18T08:49:07-04:30")).toBe("2026-03-18T13:19:07.000000Z");
    expect(canonicalTimestamp("2026-03-18T23:59:00+23:59")).toBe("2026-03-18T00:00:00.000000Z");
    expect(canonicalTimestamp("2026-03-18T00:00:00-23:59")).toBe("2026-03-18T23:59:00.000000Z");
    expect(canonicalTimestamp("2026-03-18T13:19:07-00:00")).toBe("2026-03-18T13:19:07.000000Z");
  });

  it("reject zone offsets beyond 23:59, naming the offset as the problem", () => {
    expect(failure("2026-01-01T00:00:00+24:00")).toBe(
      'InvalidInputError: invalid timestamp "2026-01-01T00:00:00+24:00": zone offset out of range',
    );
    expect(failure("2026-01-01T00:00:00-00:60")).toBe(
      'InvalidInputError: invalid timestamp "2026-01-01T00:00:00-00:60": zone offset out of range',
    );
    expect(failure("2026-01-01T00:00:00+25:99")).toMatch(/zone offset out of range$/);
  });

  it("count nanoseconds since the Unix epoch, to the nanosecond", () => {
    expect(timestampNanos("1970-01-01T00:00:00Z")).toBe(0n);
    expect(timestampNanos("1970-01-01T00:00:00.000000001Z")).toBe(1n);
    expect(timestampNanos("2026-03-18T13:19:07.360486Z")).toBe(1_773_839_947_360_486_000n);
    expect(timestampNanos("2026-03-18 13:19:07.360486")).toBe(1_773_839_947_360_486_000n);
  });

  it("handle instants before 1970, years before 100, and reject impossible zones", () => {
    expect(canonicalTimestamp("1969-12-31T23:59:59.5Z")).toBe("1969-12-31T23:59:59.500000Z");
    expect(timestampNanos(canonicalTimestamp("1969-12-31T23:59:59.5Z"))).toBe(-500_000_000n);
    expect(timestampNanos("1969-12-31T23:59:59.999999999Z")).toBe(-1n);
    expect(timestampNanos("1900-01-01T00:00:00Z")).toBe(-2_208_988_800_000_000_000n);
    expect(timestampNanos("0001-01-01T00:00:00Z")).toBe(-62_135_596_800_000_000_000n);
    expect(canonicalTimestamp("0050-06-01T00:00:00Z")).toBe("0050-06-01T00:00:00.000000Z");
    expect(canonicalTimestamp("0099-12-31 23:59:59")).toBe("0099-12-31T23:59:59.000000Z");
    expect(() => timestampNanos("2026-01-01T00:00:00+25:99")).toThrow(/zone offset/);
  });

  it("format instants before 1970 with the fraction counted forward from the second", () => {
    expect(formatTimestamp(-1n)).toBe("1969-12-31T23:59:59.999999999Z");
    expect(formatTimestamp(-1_000n)).toBe("1969-12-31T23:59:59.999999Z");
    expect(formatTimestamp(-1_000_000_000n)).toBe("1969-12-31T23:59:59.000000Z");
  });

  it("format microseconds when they suffice and nanoseconds otherwise, zero-padded", () => {
    expect(formatTimestamp(0n)).toBe("1970-01-01T00:00:00.000000Z");
    expect(formatTimestamp(1_000n)).toBe("1970-01-01T00:00:00.000001Z");
    expect(formatTimestamp(1n)).toBe("1970-01-01T00:00:00.000000001Z");
    expect(formatTimestamp(1_773_839_947_360_486_000n)).toBe("2026-03-18T13:19:07.360486Z");
  });

  it("order sub-millisecond differences", () => {
    expect(timestampNanos("2026-01-01 00:00:00.0000011")).toBeGreaterThan(
      timestampNanos("2026-01-01T00:00:00.000001Z"),
    );
  });

  it("accept the last instant of each field's range, and 29 February only in leap years", () => {
    expect(canonicalTimestamp("2026-12-31T23:59:59Z")).toBe("2026-12-31T23:59:59.000000Z");
    expect(canonicalTimestamp("2024-02-29T00:00:00Z")).toBe("2024-02-29T00:00:00.000000Z");
    expect(canonicalTimestamp("2000-02-29T00:00:00Z")).toBe("2000-02-29T00:00:00.000000Z");
    expect(canonicalTimestamp("0004-02-29T00:00:00Z")).toBe("0004-02-29T00:00:00.000000Z");
  });

  it("reject a date or time out of range, saying so", () => {
    expect(failure("2026-02-29T00:00:00Z")).toBe(
      'InvalidInputError: invalid timestamp "2026-02-29T00:00:00Z": date or time out of range',
    );
    for (const bad of [
      "1900-02-29T00:00:00Z",
      // The fast path's forms too (microseconds, nanoseconds, JP's own).
      "1900-02-29T00:00:00.000000Z",
      "2100-02-29T00:00:00.000000000Z",
      "1900-02-29 00:00:00.000000",
      "2026-02-30T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-01-00T00:00:00Z",
      "2026-00-01 00:00:00",
      "2026-13-01 00:00:00",
      "2026-01-01T24:00:00Z",
      "2026-01-01T25:00:00Z",
      "2026-01-01T00:60:00Z",
      "2026-01-01T00:00:61Z",
    ]) {
      expect(failure(bad)).toBe(
        `InvalidInputError: invalid timestamp "${bad}": date or time out of range`,
      );
    }
  });

  it("accept a leap second (RFC 3339 §5.6) as the last nanosecond before the next minute", () => {
    for (const leap of [
      "1990-12-31T23:59:60Z",
      "1990-12-31T15:59:60-08:00",
      "1991-01-01T05:29:60+05:30",
      "1990-12-31T23:59:60.25Z",
      "1990-12-31 23:59:60.5",
      "1990-12-31 23:59:60.000000",
      "1990-12-31T23:59:60.000000Z",
    ]) {
      expect(canonicalTimestamp(leap)).toBe("1990-12-31T23:59:59.999999999Z");
    }
    expect(canonicalTimestamp("2015-06-30T23:59:60Z")).toBe("2015-06-30T23:59:59.999999999Z");
    expect(canonicalTimestamp("9999-12-31T23:59:60Z")).toBe("9999-12-31T23:59:59.999999999Z");
    const leap = timestampNanos("2016-12-31T23:59:60Z");
    expect(leap).toBeGreaterThan(timestampNanos("2016-12-31T23:59:59.999999998Z"));
    expect(leap).toBeLessThan(timestampNanos("2017-01-01T00:00:00Z"));
  });

  it("refuse second 60 anywhere but 23:59:60 UTC on a month's last day, saying so", () => {
    for (const bad of [
      "2026-01-01T00:00:60Z",
      "2026-06-15T23:59:60Z",
      "1990-12-31T23:59:60-08:00",
      "1990-12-31T23:58:60Z",
    ]) {
      expect(failure(bad)).toBe(
        `InvalidInputError: invalid timestamp "${bad}": a leap second (second 60) is only 23:59:60 UTC on a month's last day`,
      );
    }
  });

  it("accept years 0001 to 9999 in UTC, up to both bounds, offsets applied first", () => {
    expect(canonicalTimestamp("0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000000Z");
    expect(canonicalTimestamp("0001-01-01T01:00:00+01:00")).toBe("0001-01-01T00:00:00.000000Z");
    expect(canonicalTimestamp("0001-01-01 00:00:00")).toBe("0001-01-01T00:00:00.000000Z");
    expect(canonicalTimestamp("9999-12-31T23:59:59.999999999Z")).toBe(
      "9999-12-31T23:59:59.999999999Z",
    );
    expect(canonicalTimestamp("9999-12-31T22:59:59.999999-01:00")).toBe(
      "9999-12-31T23:59:59.999999Z",
    );
    expect(timestampNanos("9999-12-31T23:59:59.999999999Z")).toBe(253_402_300_799_999_999_999n);
  });

  it("reject instants outside years 0001 to 9999 once in UTC, naming the year they fall in", () => {
    // Both would be stored as text that is not RFC 3339 and has lost its
    // seconds ("-000001-12-31T23:30", "+010000-01-01T00:30").
    expect(failure("0001-01-01T00:30:00+01:00")).toBe(
      'InvalidInputError: invalid timestamp "0001-01-01T00:30:00+01:00": in UTC it falls in year 0; years 0001 to 9999 only',
    );
    expect(failure("9999-12-31T23:30:00-01:00")).toBe(
      'InvalidInputError: invalid timestamp "9999-12-31T23:30:00-01:00": in UTC it falls in year 10000; years 0001 to 9999 only',
    );
    expect(failure("0000-01-01T00:00:00Z")).toBe(
      'InvalidInputError: invalid timestamp "0000-01-01T00:00:00Z": in UTC it falls in year 0; years 0001 to 9999 only',
    );
    expect(failure("0000-12-31 23:59:59.999999")).toBe(
      'InvalidInputError: invalid timestamp "0000-12-31 23:59:59.999999": in UTC it falls in year 0; years 0001 to 9999 only',
    );
    expect(failure("0000-01-01T00:00:00+01:00")).toBe(
      'InvalidInputError: invalid timestamp "0000-01-01T00:00:00+01:00": in UTC it falls in year -1; years 0001 to 9999 only',
    );
    expect(failure("0001-01-01T00:00:00.5+00:01")).toBe(
      'InvalidInputError: invalid timestamp "0001-01-01T00:00:00.5+00:01": in UTC it falls in year 0; years 0001 to 9999 only',
    );
    expect(failure("9999-12-31T23:59:59.999999999-00:01")).toBe(
      'InvalidInputError: invalid timestamp "9999-12-31T23:59:59.999999999-00:01": in UTC it falls in year 10000; years 0001 to 9999 only',
    );
  });

  it("reject malformed values with a message that shows the accepted forms", () => {
    expect(failure("yesterday")).toBe(
      'InvalidInputError: invalid timestamp "yesterday": expected RFC 3339 (2026-03-18T13:19:07.360486Z) or JP\'s form (2026-03-18 13:19:07.360486)',
    );
    for (const bad of [
      "",
      "x2026-01-01T00:00:00Z",
      "2026-01-01T00:00:00Zx",
      "2026-01-01T00:00:00Z ",
      "2026-01-01T00:00:00.1234567890Z",
      "2026-01-01T00:00:00.Z",
      "2026-01-01T00:00Z",
      "2026-1-01T00:00:00Z",
      "2026-01-01_00:00:00Z",
      "2026-01-01T00:00:00+0200",
    ]) {
      expect(failure(bad)).toMatch(/": expected RFC 3339 \(/);
    }
  });

  it("keep canonical text and JP's microsecond form, checked field by field", () => {
    expect(canonicalTimestamp("2024-02-29T23:59:59.999999Z")).toBe("2024-02-29T23:59:59.999999Z");
    expect(canonicalTimestamp("2000-02-29 12:00:00.000001")).toBe("2000-02-29T12:00:00.000001Z");
    expect(canonicalTimestamp("2026-03-18T13:19:07.123456789Z")).toBe(
      "2026-03-18T13:19:07.123456789Z",
    );
    expect(canonicalTimestamp("2026-03-18T13:19:07.123456000Z")).toBe(
      "2026-03-18T13:19:07.123456Z",
    );
    expect(canonicalTimestamp("0001-01-01 00:00:00.000000")).toBe("0001-01-01T00:00:00.000000Z");
    for (const bad of [
      "2026-02-29T00:00:00.000000Z",
      "1900-02-29 00:00:00.000000",
      "2026-04-31T00:00:00.000000Z",
      "2026-00-10 00:00:00.000000",
      "2026-01-01T24:00:00.000000Z",
      "2026-01-01 00:00:61.000000",
    ]) {
      expect(failure(bad)).toBe(
        `InvalidInputError: invalid timestamp "${bad}": date or time out of range`,
      );
    }
    expect(failure("0000-06-01T00:00:00.000000Z")).toMatch(/falls in year 0;/);
    expect(failure("2026-01-01T00:00:00.00000aZ")).toMatch(/": expected RFC 3339 \(/);
  });

  it("take the fast path for canonical text and JP's microsecond form, up to every field's bounds", () => {
    for (const text of [
      "0001-01-01T00:00:00.000000Z",
      "9999-12-31T23:59:59.999999999Z",
      "2000-02-29T00:00:00.000001Z",
      "2024-02-29T12:30:30.123456789Z",
      "2026-04-30T09:09:09.000000Z",
      "2026-01-31T19:49:59.999999Z",
    ]) {
      expect(fastCanonicalTimestamp(text)).toBe(text);
      const jp = `${text.slice(0, 10)} ${text.slice(11, 26)}`;
      expect(fastCanonicalTimestamp(jp)).toBe(`${text.slice(0, 26)}Z`);
    }
    // Left to the general path: other shapes, even when valid.
    for (const text of [
      "2026-03-18T13:19:07.360486000Z",
      "2026-03-18t13:19:07.360486Z",
      "2026-03-18T13:19:07.360486+00:00",
      "2026-03-18 13:19:07.3604",
      "2026-03-18T13:19:07Z",
    ]) {
      expect(fastCanonicalTimestamp(text)).toBeUndefined();
    }
  });

  it("take the fast path for every canonical timestamp and its JP form (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -62_135_596_800_000_000_000n, max: 253_402_300_799_999_999_999n }),
        (nanos) => {
          const text = formatTimestamp(nanos);
          expect(fastCanonicalTimestamp(text)).toBe(text);
          if (text.length === 27) {
            expect(fastCanonicalTimestamp(text.replace("T", " ").slice(0, -1))).toBe(text);
          }
        },
      ),
    );
  });

  it("normalize as the general parser and formatter do, on near-canonical text (property)", () => {
    /** The general path: parse to nanoseconds, format; or the error it throws. */
    const general = (text: string): string => {
      try {
        return formatTimestamp(timestampNanos(text));
      } catch (error) {
        return String(error);
      }
    };
    const canonical = (text: string): string => {
      try {
        return canonicalTimestamp(text);
      } catch (error) {
        return String(error);
      }
    };
    const digits = (count: number, max: number) =>
      fc.integer({ min: 0, max }).map((n) => String(n).padStart(count, "0"));
    const nearCanonical = fc
      .tuple(
        fc.oneof(digits(4, 9999), fc.constantFrom("0000", "0001", "1900", "2000", "2024", "9999")),
        fc.oneof(digits(2, 13), fc.constant("02")),
        fc.oneof(digits(2, 32), fc.constantFrom("28", "29", "30", "31")),
        digits(2, 25),
        digits(2, 60),
        digits(2, 61),
        fc.oneof(
          fc.constantFrom(".360486", ".360486789", ".360486000"),
          fc.stringMatching(/^(\.\d{0,10})?$/),
        ),
        // The two shapes of the fast path, as often as all others together.
        fc.oneof(
          fc.constantFrom(["T", "Z"], [" ", ""]),
          fc.tuple(
            fc.constantFrom("T", " ", "t", "_"),
            fc.constantFrom("Z", "", "z", "+00:00", "-01:30", "Zx"),
          ),
        ),
      )
      .map(
        ([y, mo, d, h, mi, s, fraction, [sep, zone]]) =>
          `${y}-${mo}-${d}${sep}${h}:${mi}:${s}${fraction}${zone}`,
      );
    const inRange = fc.bigInt({
      min: -62_135_596_800_000_000_000n,
      max: 253_402_300_799_999_999_999n,
    });
    const jpForm = inRange
      .filter((nanos) => nanos % 1_000n === 0n)
      .map((nanos) => formatTimestamp(nanos).replace("T", " ").slice(0, -1));
    /** One character of a canonical timestamp replaced. */
    const mutated = fc
      .tuple(inRange, fc.nat(29), fc.constantFrom(..."09-:.TZ /a"))
      .map(([nanos, at, char]) => {
        const text = formatTimestamp(nanos);
        return text.slice(0, at) + char + text.slice(at + 1);
      });
    fc.assert(
      fc.property(
        fc.oneof(
          { arbitrary: nearCanonical, weight: 4 },
          inRange.map(formatTimestamp),
          jpForm,
          mutated,
        ),
        (text) => {
          expect(canonical(text)).toBe(general(text));
        },
      ),
      propertyRuns(5_000),
    );
  });

  it("round-trip through the canonical form, years 0001 to 9999 (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -62_135_596_800_000_000_000n, max: 253_402_300_799_999_999_999n }),
        (nanos) => {
          expect(timestampNanos(formatTimestamp(nanos))).toBe(nanos);
        },
      ),
    );
  });
});
