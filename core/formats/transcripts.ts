/**
 * Provider transcripts and format bodies, shared by the API and the CLI. A
 * transcript is what a platform logs: a JSON array of turns, each the array
 * of messages that turn added, in one provider format.
 */
import { AutocompactError, InvalidInputError } from "../errors.ts";
import { estimateView } from "../estimate.ts";
import type { Entry } from "../events.ts";
import { type Projection, project } from "../projection.ts";
import { formatTimestamp } from "../timestamp.ts";
import type { ProviderFormat } from "./format.ts";
import { projectedView, rawView } from "./view.ts";

/** The next request's messages, each turn's origin and the estimate (`project --format`; the API answers it in pages). */
export function projectionBody(
  format: ProviderFormat,
  raw: readonly Entry[],
  projection: Projection = project(raw),
) {
  return {
    format: format.name,
    [format.field]: format.fromView(projectedView(raw, projection)),
    turns: projection.turns,
    estimated_tokens: estimateView(projection.entries).estimated_tokens,
  };
}

/**
 * A transcript as a JP stream. Transcripts carry no times: turn `n` is
 * stamped `n` seconds after the Unix epoch, so a conversion is reproducible.
 * A problem names the turn, then the message (`turn 3: messages[1]: …`).
 */
export function transcriptToStream(
  format: ProviderFormat,
  turns: readonly unknown[],
  options: { readonly dropSystem?: boolean } = {},
): Entry[] {
  const stream: Entry[] = [];
  turns.forEach((messages, turn) => {
    try {
      const timestamp = formatTimestamp(BigInt(turn) * 1_000_000_000n);
      const converted = format.toEvents(messages, {
        timestamp,
        dropSystem: options.dropSystem === true,
      });
      for (const event of converted.events) stream.push(event);
    } catch (error) {
      if (!(error instanceof AutocompactError)) throw error;
      throw new InvalidInputError(`turn ${turn}: ${error.message}`, { cause: error });
    }
  });
  return stream;
}

/** A stream's raw view as a transcript: each turn's messages (turns without any are empty arrays). */
export function streamToTranscript(format: ProviderFormat, raw: readonly Entry[]): unknown[][] {
  return rawView(raw).map((turn) => format.fromView([turn]));
}
