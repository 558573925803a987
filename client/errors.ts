/**
 * The one error {@link AutocompactClient} throws: a non-2xx answer, with the
 * service's RFC 9457 problem, or a service that could not be reached.
 */

import { AutocompactError } from "../core/errors.ts";
import type { Problem } from "./types.ts";

/** A failed request: the service's problem detail, or the transport error. */
export class ServiceError extends AutocompactError {
  override readonly name = "ServiceError";
  constructor(
    message: string,
    /** The status the service answered with; 0 when it could not be reached. */
    status: number,
    /**
     * The service's problem document (`type`, `title`, `detail`, and
     * extensions such as `expected_turn` or `errors`), when it sent one.
     */
    readonly problem?: Problem,
  ) {
    super(message, { status, slug: "service-error", title: "The service answered with an error" });
  }
}
