/**
 * The settings every AWS client of the CLI starts from: `--region`, and the
 * environment the command was given (`io.env`), not this process's. The SDK's
 * default chain reads `process.env` itself, so a command run in process with
 * another environment (`run(argv, io)`) would reach other credentials; with
 * the keys in `io.env` they are passed explicitly. Without them the default
 * chain applies (profiles, SSO, instance roles).
 */
type Env = Readonly<Record<string, string | undefined>>;

/** Region and credentials for an AWS SDK client, from `--region` and the command's environment. */
export function awsClientSettings(
  region: string | undefined,
  env: Env,
): {
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
} {
  const chosen = region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  return {
    ...(chosen ? { region: chosen } : {}),
    ...(accessKeyId && secretAccessKey
      ? {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  };
}
