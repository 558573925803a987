/**
 * The CDK app (`cdk.json`: `npx tsx infra/app.ts`). Settings come from
 * context: `npx cdk deploy -c logLevel=DEBUG -c summarizer=bedrock …` (see
 * docs/deploy.md); the stack's name from `-c stackName=…` (default
 * `Autocompact`). An invalid setting stops the synth with one line naming it.
 */

import { buildApp } from "./build-app.ts";
import { SettingsError } from "./config.ts";

try {
  buildApp();
} catch (error) {
  if (!(error instanceof SettingsError)) throw error;
  console.error(error.message);
  process.exit(1);
}
