/**
 * Validation against OpenAI's own published schemas: the fixtures under
 * test/fixtures/openai/ are extracted from openai/openai-openapi by
 * scripts/openai-schemas.ts (JSON Schema 2020-12, hence ajv/dist/2020).
 *
 * ajv options: strictSchema (an unknown keyword in a fixture is an error, so
 * the script's translation cannot silently lose a constraint); discriminator
 * (the script keeps only discriminators ajv accepts, and they give one error
 * for the selected branch instead of one per oneOf branch); allErrors.
 * strictTypes and strictTuples are off: they reject schema style OpenAI's
 * document uses (e.g. a discriminator without type "object"), not meaning.
 * Formats: ajv-formats asserts the ones it knows (uri, int64, ...); formats
 * it does not know (OpenAI's "unixtime", "binary" is known) are annotations,
 * as JSON Schema 2020-12 has it for unknown formats.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const FIXTURES = new URL("../fixtures/openai/", import.meta.url);

/** Every `format` value used in a schema. */
function formats(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) formats(item, found);
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "format" && typeof value === "string") found.add(value);
      else formats(value, found);
    }
  }
  return found;
}

const compiled = new Map<string, ValidateFunction>();

type Schema = Record<string, unknown>;

/**
 * The one correction made to a fixture before it is compiled, for
 * responses-input.schema.json: OpenAI's `InputItem` is a `oneOf` whose first
 * branch, `EasyInputMessage`, and `Item`'s `InputMessage` both accept a
 * user, system or developer message with a content list (neither closes its
 * properties), so every such message matches two branches and a strict
 * `oneOf` refuses it, while the API takes it. The `EasyInputMessage` branch
 * is made to count only for what is not an `InputMessage`: the branches stay
 * exclusive, and nothing either branch refuses is accepted.
 */
const CORRECTIONS: Record<string, (schema: Schema) => void> = {
  "responses-input.schema.json": (schema) => {
    const defs = schema.$defs as Record<string, Schema>;
    const branches = (defs.InputItem as Schema).oneOf as Schema[];
    const easy = branches.findIndex((branch) => branch.$ref === "#/$defs/EasyInputMessage");
    if (easy < 0 || !defs.InputMessage) throw new Error("InputItem changed: review CORRECTIONS");
    branches[easy] = {
      allOf: [{ $ref: "#/$defs/EasyInputMessage" }, { not: { $ref: "#/$defs/InputMessage" } }],
    };
  },
};

/** The compiled validator of one fixture, compiled once. */
function validator(file: string): ValidateFunction {
  let validate = compiled.get(file);
  if (!validate) {
    const schema = JSON.parse(readFileSync(new URL(file, FIXTURES), "utf8")) as Schema;
    CORRECTIONS[file]?.(schema);
    const ajv = new Ajv2020({
      strictSchema: true,
      strictTypes: false,
      strictTuples: false,
      discriminator: true,
      allErrors: true,
    });
    addFormats(ajv);
    for (const format of formats(schema)) {
      if (!(format in ajv.formats)) ajv.addFormat(format, true);
    }
    validate = ajv.compile(schema);
    compiled.set(file, validate);
  }
  return validate;
}

/** One ajv error as "instancePath message (detail)". */
function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "(root)" : error.instancePath;
  const text = `${where} ${error.message ?? error.keyword}`;
  const params = error.params as Record<string, unknown>;
  if (Array.isArray(params.allowedValues))
    return `${text} (${JSON.stringify(params.allowedValues)})`;
  if (typeof params.additionalProperty === "string")
    return `${text} (${params.additionalProperty})`;
  if (params.tagValue !== undefined) return `${text} (got ${JSON.stringify(params.tagValue)})`;
  return text;
}

/** The errors of `data` against a fixture; empty when it is valid. */
export function openaiSchemaErrors(file: string, data: unknown): string[] {
  const validate = validator(file);
  if (validate(data)) return [];
  return [...new Set((validate.errors ?? []).map(describe))];
}

/**
 * Why `messages` is not a valid Chat Completions `messages` array
 * (CreateChatCompletionRequest.messages, array of ChatCompletionRequestMessage)
 * by OpenAI's published schema; empty when it is valid.
 */
export function openaiChatMessageErrors(messages: unknown): string[] {
  return openaiSchemaErrors("chat-messages.schema.json", messages);
}

/**
 * Why `input` is not a valid Responses `input` array (CreateResponse.input,
 * array of InputItem) by OpenAI's published schema, with the one correction
 * of {@link CORRECTIONS}; empty when it is valid.
 */
export function openaiResponsesInputErrors(input: unknown): string[] {
  return openaiSchemaErrors("responses-input.schema.json", input);
}
