/**
 * The KMS key sealing webhook secrets (issue 13 item 6): rotated, kept with
 * the table, found by the CLI through its alias, passed to the api and the
 * notifier only; the api may decrypt and seal (a notification endpoint's new
 * secret) with it and do nothing else, the notifier only decrypt, and the
 * compactor may not use it.
 */
import { describe, expect, it } from "vitest";
import { asArray, defaultSynth, functionStatements, logicalId, resourcesOf } from "./synth.ts";

const s = defaultSynth();

const keyId = () => logicalId(s.stack, s.stack.secretsKey);

const kmsActionsOf = (fn: typeof s.stack.apiFunction) =>
  functionStatements(s, fn).filter((st) => asArray(st.Action).some((a) => a.startsWith("kms:")));

describe("webhook secrets key", () => {
  it("is one customer managed key with automatic rotation, retained with the table", () => {
    const keys = resourcesOf(s, "AWS::KMS::Key");
    expect(Object.keys(keys)).toEqual([keyId()]);
    const key = keys[keyId()];
    expect(key?.Properties?.EnableKeyRotation).toBe(true);
    expect(key?.DeletionPolicy).toBe("Retain");
    expect(key?.UpdateReplacePolicy).toBe("Retain");
  });

  it("has the alias the CLI looks for: alias/autocompact/<table name>", () => {
    const aliases = Object.values(resourcesOf(s, "AWS::KMS::Alias"));
    expect(aliases).toHaveLength(1);
    expect(aliases[0]?.Properties).toEqual({
      AliasName: {
        "Fn::Join": ["", ["alias/autocompact/", { Ref: logicalId(s.stack, s.stack.table) }]],
      },
      TargetKeyId: { "Fn::GetAtt": [keyId(), "Arn"] },
    });
  });

  it("is passed to the api (WEBHOOK_SECRETS_KEY_ARN) and not to the compactor", () => {
    const variables = (fn: typeof s.stack.apiFunction) =>
      (
        (s.json.Resources[logicalId(s.stack, fn)]?.Properties?.Environment ?? {}) as {
          Variables?: Record<string, unknown>;
        }
      ).Variables ?? {};
    expect(variables(s.stack.apiFunction).WEBHOOK_SECRETS_KEY_ARN).toEqual({
      "Fn::GetAtt": [keyId(), "Arn"],
    });
    expect(variables(s.stack.compactorFunction)).not.toHaveProperty("WEBHOOK_SECRETS_KEY_ARN");
  });

  it("lets the api kms:Decrypt and kms:GenerateDataKey under this key only, the notifier kms:Decrypt, and the compactor nothing", () => {
    const actions = (fn: typeof s.stack.apiFunction) => {
      const statements = kmsActionsOf(fn);
      for (const statement of statements)
        expect(statement.Resource).toEqual({ "Fn::GetAtt": [keyId(), "Arn"] });
      return statements.flatMap((statement) => asArray(statement.Action)).sort();
    };
    expect(actions(s.stack.apiFunction)).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
    expect(actions(s.stack.notifierFunction)).toEqual(["kms:Decrypt"]);
    expect(kmsActionsOf(s.stack.compactorFunction)).toEqual([]);
  });

  it("is a stack output for the operator", () => {
    expect(s.json.Outputs?.WebhookSecretsKeyArn).toMatchObject({
      Value: { "Fn::GetAtt": [keyId(), "Arn"] },
    });
  });
});
