/**
 * What the stack bounds (docs/architecture.md §10): reserved concurrency for
 * the compactor and the notifier, so neither can take the account's whole
 * Lambda concurrency (nor be starved of it by the api), with their SQS event
 * sources' maximum concurrency at most that (a poll Lambda throttles counts a
 * receive of its messages); and the api's default per-tenant limits
 * (functions/env.ts), when the settings give them.
 */
import { CfnEventSourceMapping, type Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import type { AutocompactSettings } from "./config.ts";

/** Applies the settings' concurrency and tenant limits to the stack's functions. */
export function applyLimits(
  functions: {
    readonly apiFunction: LambdaFunction;
    readonly compactorFunction: LambdaFunction;
    readonly notifierFunction: LambdaFunction;
  },
  settings: Pick<AutocompactSettings, "compactor" | "notifier" | "tenantLimitsEnvironment">,
): void {
  reserve(functions.compactorFunction, settings.compactor.reservedConcurrency);
  reserve(functions.notifierFunction, settings.notifier.reservedConcurrency);
  for (const mapping of functions.notifierFunction.node.findAll()) {
    if (mapping instanceof CfnEventSourceMapping) {
      mapping.scalingConfig = { maximumConcurrency: settings.notifier.reservedConcurrency };
    }
  }
  for (const [name, value] of Object.entries(settings.tenantLimitsEnvironment)) {
    functions.apiFunction.addEnvironment(name, value);
  }
}

/** Sets a function's reserved concurrency (a property of its CloudFormation resource). */
function reserve(fn: LambdaFunction, concurrency: number): void {
  const resource = fn.node.defaultChild as { reservedConcurrentExecutions?: number };
  resource.reservedConcurrentExecutions = concurrency;
}
