import { describe, expect, it } from "vitest";
import { awsClientSettings } from "./aws.ts";

describe("awsClientSettings", () => {
  it("takes the region from --region first, then AWS_REGION, then AWS_DEFAULT_REGION", () => {
    const env = { AWS_REGION: "eu-west-1", AWS_DEFAULT_REGION: "us-east-1" };
    expect(awsClientSettings("ap-south-1", env)).toEqual({ region: "ap-south-1" });
    expect(awsClientSettings(undefined, env)).toEqual({ region: "eu-west-1" });
    expect(awsClientSettings(undefined, { AWS_DEFAULT_REGION: "us-east-1" })).toEqual({
      region: "us-east-1",
    });
  });

  it("passes the command's keys explicitly, and leaves the default chain otherwise", () => {
    expect(
      awsClientSettings(undefined, {
        AWS_ACCESS_KEY_ID: "AKID",
        AWS_SECRET_ACCESS_KEY: "secret",
        AWS_SESSION_TOKEN: "token",
      }),
    ).toEqual({
      credentials: { accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "token" },
    });
    expect(awsClientSettings(undefined, { AWS_ACCESS_KEY_ID: "AKID" })).toEqual({});
    expect(awsClientSettings(undefined, { AWS_PROFILE: "dev" })).toEqual({});
  });
});
