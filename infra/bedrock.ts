/**
 * The IAM resources `bedrock:InvokeModel` (what the Converse API needs) must
 * name for one model id, and nothing more.
 *
 * - A foundation model id (`anthropic.claude-haiku-4-5-20251001-v1:0`): that
 *   model in the stack's region.
 * - A cross-region inference profile id (`us.…`, `eu.…`, `apac.…`, `global.…`):
 *   the profile in the stack's region, plus the underlying foundation model
 *   in every region the profile may route to (`bedrock:*::foundation-model/…`,
 *   region wildcarded because AWS picks the region per request; a `global.`
 *   profile also needs the region-less model ARN). The model stays fixed.
 * - An ARN (provisioned throughput, application inference profile, …): as given.
 */
import { Aws } from "aws-cdk-lib";

/** Geographic prefixes of Bedrock's system-defined cross-region inference profiles. */
const PROFILE_PREFIXES = new Set(["us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"]);

/** One model's resources, and the cdk-nag findings the region wildcard causes (to acknowledge). */
export interface BedrockModelResources {
  readonly arns: readonly string[];
  /** The `Resource::…` parts of `AwsSolutions-IAM5` findings, as cdk-nag flattens them. */
  readonly wildcardFindings: readonly string[];
}

export function bedrockModelResources(modelId: string): BedrockModelResources {
  if (modelId.startsWith("arn:")) return { arns: [modelId], wildcardFindings: [] };
  const dot = modelId.indexOf(".");
  const prefix = dot > 0 ? modelId.slice(0, dot) : "";
  if (PROFILE_PREFIXES.has(prefix)) {
    const model = modelId.slice(dot + 1);
    const arns = [
      `arn:${Aws.PARTITION}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:inference-profile/${modelId}`,
      `arn:${Aws.PARTITION}:bedrock:*::foundation-model/${model}`,
    ];
    if (prefix === "global") arns.push(`arn:${Aws.PARTITION}:bedrock:::foundation-model/${model}`);
    return {
      arns,
      wildcardFindings: [`Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model}`],
    };
  }
  return {
    arns: [`arn:${Aws.PARTITION}:bedrock:${Aws.REGION}::foundation-model/${modelId}`],
    wildcardFindings: [],
  };
}
