/** Errors of conversation operations; the API maps each to one HTTP status. */

/** The posted turn does not fit the stored stream (a gap, or different content for a stored turn). */
export class TurnConflictError extends Error {
  override readonly name = "TurnConflictError";
  constructor(
    message: string,
    readonly expectedTurn: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The posted turn is malformed in a way a schema cannot express (turn structure, compactions). */
export class InvalidTurnError extends Error {
  override readonly name = "InvalidTurnError";
}

/** No conversation with that id for this tenant. */
export class ConversationNotFoundError extends Error {
  override readonly name = "ConversationNotFoundError";
}

/** A manual compaction or reset that cannot apply to the conversation as it is. */
export class CompactionRequestError extends Error {
  override readonly name = "CompactionRequestError";
}

/** A summary was needed but no summarizer is configured. */
export class SummarizerUnavailableError extends Error {
  override readonly name = "SummarizerUnavailableError";
}

/** Optimistic writes kept losing races; the caller may retry later. */
export class ContentionError extends Error {
  override readonly name = "ContentionError";
}
