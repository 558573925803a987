/**
 * Builds the CDK app as `cdk synth`/`cdk deploy` run it (infra/app.ts is the
 * entry point): the stack with settings read from context, and cdk-nag's
 * AwsSolutions and Serverless packs registered as validation plugins, so an
 * unacknowledged finding fails the synth. The tests build the same app.
 */
import { App, type AppProps, Validations } from "aws-cdk-lib";
import cdkNag from "cdk-nag";
import { SettingsError, settingsFromContext } from "./config.ts";
import { AutocompactStack } from "./stack.ts";

// cdk-nag is CommonJS; Node's ESM loader cannot see its named exports.
const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;

/** The stack's name when the context does not set `stackName`. */
export const DEFAULT_STACK_NAME = "Autocompact";

/** The app and its one stack. Throws {@link SettingsError} for bad context. */
export function buildApp(props: AppProps = {}): { app: App; stack: AutocompactStack } {
  const app = new App(props);
  const stackNameContext = app.node.tryGetContext("stackName");
  const stackName = stackNameContext === undefined ? DEFAULT_STACK_NAME : String(stackNameContext);
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new SettingsError([
      `stackName: "${stackName}" is not a CloudFormation stack name (letters, digits, hyphens; a letter first)`,
    ]);
  }
  const stack = new AutocompactStack(app, stackName, {
    description:
      "autocompact: automatic, non-destructive compaction of agent conversations (RFD D50)",
    settings: settingsFromContext(
      (key) => app.node.tryGetContext(key),
      Object.keys(app.node.getAllContext()).filter((key) => key !== "stackName"),
    ),
  });
  Validations.of(app).addPlugins(
    // Writes each acknowledgment (rule and reason) into the template's
    // Metadata too, for audits of the deployed template.
    new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }),
    new ServerlessChecks(app, { verbose: true }),
  );
  return { app, stack };
}
