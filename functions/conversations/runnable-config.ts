/**
 * The configs this service can run. A conversation's effective config is
 * checked whenever one of its layers changes (a PUT, a turn's config
 * deltas), so the compactor never meets a config it must fail on.
 */
import { type AutoConfig, type AutoConfigLayer, ConfigError } from "../../core/config.ts";
import { InvalidInputError, PROBLEM_VARIANTS, SummaryRequiredError } from "../../core/errors.ts";
import { type ConversationHead, EMPTY_HEAD, type Summarizer, type Tenant } from "../ports.ts";
import { effectiveConfig, type ServiceSettings } from "./state.ts";

/** What decides whether a config can run: the service's layer, and whether it has a summarizer. */
export interface RunnableConfigDeps {
  readonly settings: ServiceSettings;
  readonly summarizer: Summarizer | undefined;
}

/**
 * The effective config with `head`'s layers, if this service can run it:
 * valid ({@link ConfigError} otherwise) and, when its rule summarizes,
 * with a summarizer ({@link SummaryRequiredError} otherwise).
 */
export function runnableConfig(
  deps: RunnableConfigDeps,
  tenant: Tenant,
  head: ConversationHead,
): AutoConfig {
  const effective = effectiveConfig(deps.settings, tenant, head);
  if (effective.rule.summary && !deps.summarizer) {
    throw new SummaryRequiredError(
      "conversation.compaction.auto.rule.summary: this service has no summarizer configured, so a summary rule could never run (set SUMMARIZER locally, or the stack's summarizer setting)",
    );
  }
  return effective;
}

/** A turn's config deltas must leave a config this service can run, exactly as a PUT must. */
export function checkStreamConfig(
  deps: RunnableConfigDeps,
  tenant: Tenant,
  head: ConversationHead | undefined,
  streamConfig: AutoConfigLayer,
): void {
  try {
    runnableConfig(deps, tenant, { ...(head ?? EMPTY_HEAD), stream_config: streamConfig });
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new InvalidInputError(`the turn's config_delta: ${error.message}`, {
        ...PROBLEM_VARIANTS.invalidTurn,
        cause: error,
      });
    }
    if (error instanceof SummaryRequiredError) {
      throw new SummaryRequiredError(`the turn's config_delta: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}
