import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalTimestamp,
  formatTimestamp,
  TimestampError,
  timestampFromMillis,
  timestampNanos,
} from "./timestamp.ts";

describe("timestamps", () => {
  it("accept JP's stored form as UTC, with any fraction length", () => {
    expect(canonicalTimestamp("2026-03-18 13:19:07.360486")).toBe("2026-03-18T13:19:07.360486Z");
    expect(canonicalTimestamp("2026-03-05 19:31:45.7")).toBe("2026-03-05T19:31:45.700000Z");
    expect(canonicalTimestamp("2025-01-15 12:00:00.0")).toBe("2025-01-15T12:00:00.000000Z");
  });

  it("accept RFC 3339 with offsets and nanoseconds", () => {
    expect(canonicalTimestamp("2026-03-18T15:19:07+02:00")).toBe("2026-03-18T13:19:07.000000Z");
    expect(canonicalTimestamp("2026-03-18T13:19:07.123456789Z")).toBe(
      "2026-03-18T13:19:07.123456789Z",
    );
  });

  it("handle instants before 1970, years before 100, and reject impossible zones", () => {
    expect(canonicalTimestamp("1969-12-31T23:59:59.5Z")).toBe("1969-12-31T23:59:59.500000Z");
    expect(timestampNanos(canonicalTimestamp("1969-12-31T23:59:59.5Z"))).toBe(-500_000_000n);
    expect(canonicalTimestamp("0050-06-01T00:00:00Z")).toBe("0050-06-01T00:00:00.000000Z");
    expect(() => timestampNanos("2026-01-01T00:00:00+25:99")).toThrow(/zone offset/);
  });

  it("order sub-millisecond differences", () => {
    expect(timestampNanos("2026-01-01 00:00:00.0000011")).toBeGreaterThan(
      timestampNanos("2026-01-01T00:00:00.000001Z"),
    );
  });

  it("reject malformed or impossible values with a message that shows the accepted forms", () => {
    for (const bad of [
      "yesterday",
      "2026-02-30T00:00:00Z",
      "2026-13-01 00:00:00",
      "2026-01-01T25:00:00Z",
      "",
    ]) {
      expect(() => timestampNanos(bad)).toThrow(TimestampError);
    }
    expect(() => timestampNanos("nope")).toThrow(/RFC 3339/);
  });

  it("round-trip through the canonical form (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 4_000_000_000n * 1_000_000_000n }), (nanos) => {
        expect(timestampNanos(formatTimestamp(nanos))).toBe(nanos);
      }),
    );
  });

  it("convert clock readings", () => {
    expect(timestampFromMillis(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe(
      "2026-01-02T03:04:05.678000Z",
    );
  });
});
