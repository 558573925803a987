/**
 * Extracts OpenAI's own JSON Schemas for the wire formats autocompact answers
 * in, from OpenAI's published OpenAPI document
 * (https://github.com/openai/openai-openapi, file openapi.json), into
 * self-contained JSON Schema 2020-12 fixtures under test/fixtures/openai/.
 * test/helpers/openai-schema.ts validates our output against them with ajv,
 * so "valid" means valid by OpenAI's definitions, not by ours.
 *
 *   git clone https://github.com/openai/openai-openapi ../openai-openapi
 *   npx tsx scripts/openai-schemas.ts [PATH_TO_openapi.json] [--commit SHA]
 *
 * The path defaults to ../openai-openapi/openapi.json (a clone beside this
 * project). The source commit is read with git when the file is in a git
 * checkout; pass --commit when it is not (e.g. a copy in /tmp).
 *
 * Each root in ROOTS gives one fixture: the element schema (e.g.
 * ChatCompletionRequestMessage), found as the items of an array inside a
 * property of a request body schema (so the name is checked against the
 * document, not trusted), every schema its $refs reach, under $defs, and a
 * top-level "array of element" schema carrying the array's own constraints
 * (e.g. minItems). Adding a format is adding a row.
 *
 * Dialect. OpenAPI 3.1 schemas are JSON Schema 2020-12 (the default
 * jsonSchemaDialect); 3.0 schemas are a subset with a few OpenAPI keywords.
 * OpenAI's 3.1 document still uses some 3.0 and 2019-09 spellings, so every
 * schema is rewritten keyword by keyword (schema-aware: property names are
 * never mistaken for keywords):
 *   - $ref "#/components/schemas/X" becomes "#/$defs/X"; other refs (other
 *     documents, pointers into a component, names needing escapes) throw.
 *   - nullable: true (3.0) adds "null" to `type` (and to `enum` if any); on a
 *     schema without `type` but with constraints, it becomes
 *     anyOf [schema, {type: "null"}]; on a schema with no constraint at all
 *     it adds nothing (null is already allowed). Known gap: the 3.0 pattern
 *     allOf [{$ref}, {nullable: true}] cannot be expressed by rewriting one
 *     member and stays "not null" (no such schema is reached by the roots).
 *   - exclusiveMinimum/exclusiveMaximum: true (3.0 booleans) become the
 *     2020-12 numbers (taken from minimum/maximum); false is dropped.
 *   - items as an array (tuple, draft 4) becomes prefixItems.
 *   - required loses duplicate names (a few in OpenAI's document; the
 *     2020-12 meta-schema requires unique items, the meaning is the same).
 *   - $recursiveRef "#" (2019-09, not in 2020-12) inside a component whose
 *     top has $recursiveAnchor: true becomes a $ref to that component.
 *   - discriminator (OpenAPI) is kept where ajv's `discriminator: true`
 *     option accepts it and means the same as the oneOf it replaces: oneOf,
 *     no mapping, every branch (inline, or a $ref alone) is type "object", has
 *     properties[tag] with const/enum and requires the tag, tag values are
 *     distinct strings. ajv then validates only the branch the tag selects,
 *     which for such a oneOf accepts exactly the same objects. ajv applies
 *     its discriminator to objects only (and skips the oneOf), so the schema
 *     gets type "object" if it has no type: every branch rejects non-objects
 *     already, so this changes nothing. Elsewhere the discriminator is
 *     dropped: in OpenAPI it is a hint, the oneOf/anyOf is the constraint.
 *   - example, xml, externalDocs (OpenAPI), x-* extensions, and any key that
 *     is no 2020-12 keyword (e.g. typos like min_items) are dropped: unknown
 *     keywords are annotations in JSON Schema, and ajv's strict mode rejects
 *     them. Dropped keys are counted in the fixture's $comment.
 *   - $id, $anchor, $dynamicRef, $dynamicAnchor, $schema, $vocabulary in a
 *     component throw: none occur today, and each would need real handling.
 *   - every other 2020-12 keyword (annotations such as title, description,
 *     default, deprecated included) is copied unchanged.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One fixture: an array of `element`, found inside `container.property`. */
export interface Root {
  /** File name under test/fixtures/openai/. */
  file: string;
  /** Title of the top-level schema. */
  title: string;
  /** The request body schema and its property that holds the array. */
  container: { schema: string; property: string };
  /** The array's element schema (a component name). */
  element: string;
}

export const ROOTS: readonly Root[] = [
  {
    file: "chat-messages.schema.json",
    title: "Chat Completions messages (array of ChatCompletionRequestMessage)",
    container: { schema: "CreateChatCompletionRequest", property: "messages" },
    element: "ChatCompletionRequestMessage",
  },
  {
    file: "responses-input.schema.json",
    title: "Responses input (array of InputItem)",
    container: { schema: "CreateResponse", property: "input" },
    element: "InputItem",
  },
];

/** Where the document came from, recorded in the fixture's $comment. */
export interface Source {
  /** openai/openai-openapi commit, when known. */
  commit?: string;
  /** sha256 of the openapi.json bytes, when read from a file. */
  sha256?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

export const DIALECT = "https://json-schema.org/draft/2020-12/schema";
const COMPONENT = "#/components/schemas/";

/** Keywords whose value is a map of name → subschema. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
/** Keywords whose value is one subschema. */
const SCHEMA_ONE = new Set([
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords that only annotate: a schema made of these alone accepts everything. */
const ANNOTATIONS = new Set([
  "title",
  "description",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "examples",
  "$comment",
]);
/** 2020-12 keywords copied as they are (assertions and annotations). */
const VERBATIM = new Set([
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "minimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "format",
  "contentEncoding",
  "contentMediaType",
  ...ANNOTATIONS,
]);
/** Identifier keywords a component is not expected to carry. */
const UNSUPPORTED = new Set([
  "$id",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$schema",
  "$vocabulary",
]);

const isObject = (v: unknown): v is Schema =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function components(doc: unknown): Schema {
  const schemas = isObject(doc) && isObject(doc.components) ? doc.components.schemas : undefined;
  if (!isObject(schemas)) throw new Error("not an OpenAPI document: no components.schemas");
  return schemas;
}

/** The OpenAPI version, checked to be one whose schemas this script translates. */
export function openapiVersion(doc: unknown): string {
  const version = isObject(doc) ? doc.openapi : undefined;
  if (typeof version !== "string" || !/^3\.[012]\./.test(version)) {
    throw new Error(`unsupported OpenAPI version ${JSON.stringify(version)} (3.0 to 3.2 only)`);
  }
  const dialect = isObject(doc) ? doc.jsonSchemaDialect : undefined;
  if (dialect !== undefined && dialect !== DIALECT) {
    throw new Error(`unsupported jsonSchemaDialect ${JSON.stringify(dialect)}`);
  }
  return version;
}

function componentName(ref: string, where: string): string {
  const name = ref.startsWith(COMPONENT) ? ref.slice(COMPONENT.length) : "";
  // Plain names only: they are the same in a JSON pointer, a URI fragment and $defs.
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new Error(`${where}: unsupported $ref ${ref} (only ${COMPONENT}<name>)`);
  }
  return name;
}

/**
 * The array schema inside `schema`'s property `property` whose items are a
 * $ref to `element`, following $refs and allOf/anyOf/oneOf.
 */
function findArray(all: Schema, root: Root): Schema {
  const seen = new Set<Json>();
  const target = `${COMPONENT}${root.element}`;
  const search = (node: Json | undefined, viaProperty: boolean): Schema | undefined => {
    if (!isObject(node) || seen.has(node)) return undefined;
    seen.add(node);
    if (viaProperty && isObject(node.items) && node.items.$ref === target) return node;
    if (typeof node.$ref === "string") {
      const found = search(all[componentName(node.$ref, root.container.schema)], viaProperty);
      if (found) return found;
    }
    if (!viaProperty && isObject(node.properties)) {
      const found = search(node.properties[root.container.property], true);
      if (found) return found;
    }
    for (const key of ["allOf", "anyOf", "oneOf"]) {
      const list = node[key];
      if (!Array.isArray(list)) continue;
      for (const member of list) {
        const found = search(member, viaProperty);
        if (found) return found;
      }
    }
    return undefined;
  };
  if (!isObject(all[root.container.schema])) {
    throw new Error(`no schema ${root.container.schema} in the document`);
  }
  if (!isObject(all[root.element])) throw new Error(`no schema ${root.element} in the document`);
  const found = search(all[root.container.schema], false);
  if (!found) {
    throw new Error(
      `${root.container.schema}.${root.container.property} holds no array of ${root.element}`,
    );
  }
  return found;
}

/** Rewrites schemas of one component; collects the components they reference. */
class Translator {
  readonly refs = new Set<string>();
  readonly dropped = new Map<string, number>();

  /** `component`: the component's name; `root`: its schema (for $recursiveRef). */
  constructor(
    private readonly component: string,
    private readonly root: Json = null,
  ) {}

  private drop(key: string): void {
    const label = key.startsWith("x-") ? "x-*" : key;
    this.dropped.set(label, (this.dropped.get(label) ?? 0) + 1);
  }

  schema(node: Json, path: string, top = false): Json {
    if (typeof node === "boolean") return node;
    if (!isObject(node)) throw new Error(`${path}: not a schema`);
    const out: Schema = {};
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_MAPS.has(key)) {
        if (!isObject(value)) throw new Error(`${path}/${key}: not an object`);
        const map: Schema = {};
        for (const [name, sub] of Object.entries(value)) {
          map[name] = this.schema(sub, `${path}/${key}/${name}`);
        }
        out[key] = map;
      } else if (key === "items" && Array.isArray(value)) {
        out.prefixItems = value.map((sub, i) => this.schema(sub, `${path}/items/${i}`));
      } else if (SCHEMA_ONE.has(key)) {
        out[key] = this.schema(value, `${path}/${key}`);
      } else if (SCHEMA_LISTS.has(key)) {
        if (!Array.isArray(value)) throw new Error(`${path}/${key}: not an array`);
        out[key] = value.map((sub, i) => this.schema(sub, `${path}/${key}/${i}`));
      } else if (key === "$ref") {
        if (typeof value !== "string") throw new Error(`${path}/$ref: not a string`);
        const name = componentName(value, path);
        this.refs.add(name);
        out.$ref = `#/$defs/${name}`;
      } else if (key === "$recursiveRef") {
        if (value !== "#" || !isObject(this.root) || this.root.$recursiveAnchor !== true) {
          throw new Error(`${path}: $recursiveRef without a $recursiveAnchor on its component`);
        }
        this.refs.add(this.component);
        out.$ref = `#/$defs/${this.component}`;
      } else if (key === "$recursiveAnchor") {
        if (!top) throw new Error(`${path}: $recursiveAnchor below the top of a component`);
      } else if (key === "exclusiveMinimum" || key === "exclusiveMaximum") {
        const bound = key === "exclusiveMinimum" ? "minimum" : "maximum";
        if (typeof value === "number") out[key] = value;
        else if (value === true && typeof node[bound] === "number") out[key] = node[bound];
        else if (value !== false) throw new Error(`${path}/${key}: ${JSON.stringify(value)}`);
      } else if (key === "minimum" || key === "maximum") {
        const exclusive = key === "minimum" ? "exclusiveMinimum" : "exclusiveMaximum";
        if (node[exclusive] !== true) out[key] = value;
      } else if (key === "required" && Array.isArray(value)) {
        out.required = [...new Set(value)];
      } else if (key === "discriminator") {
        out.discriminator = value; // checked against ajv's rules once all $defs are known
      } else if (key === "nullable") {
        // applied below, after the other keywords
      } else if (VERBATIM.has(key)) {
        out[key] = value;
      } else if (UNSUPPORTED.has(key)) {
        throw new Error(`${path}: unsupported keyword ${key}`);
      } else {
        this.drop(key);
      }
    }
    return node.nullable === true ? nullable(out) : out;
  }
}

/** `schema` or null (OpenAPI 3.0 `nullable: true`). */
function nullable(schema: Schema): Schema {
  const { type } = schema;
  if ("const" in schema) return { anyOf: [schema, { type: "null" }] };
  if (typeof type === "string" || Array.isArray(type)) {
    const types = typeof type === "string" ? [type] : type;
    const out: Schema = { ...schema, type: types.includes("null") ? types : [...types, "null"] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null))
      out.enum = [...schema.enum, null];
    return out;
  }
  if (Object.keys(schema).every((key) => ANNOTATIONS.has(key))) return schema;
  return { anyOf: [schema, { type: "null" }] };
}

/** The values a discriminator branch's tag property may take, if ajv can read them. */
function tagValues(branch: Json, defs: Schema, tag: string, topRequired: boolean): Json[] | null {
  if (!isObject(branch)) return null;
  let schema: Json | undefined = branch;
  const keys = Object.keys(branch);
  if (typeof branch.$ref === "string") {
    // ajv follows the $ref only when the branch has no other keyword
    if (keys.length !== 1) return null;
    schema = defs[branch.$ref.slice("#/$defs/".length)];
  }
  if (!isObject(schema) || schema.type !== "object" || !isObject(schema.properties)) return null;
  const prop = schema.properties[tag];
  const required = Array.isArray(schema.required) && schema.required.includes(tag);
  if (!isObject(prop) || !(required || topRequired)) return null;
  if ("const" in prop && prop.const !== undefined) return [prop.const];
  if (Array.isArray(prop.enum)) return prop.enum;
  return null;
}

/** Whether ajv (`discriminator: true`) accepts this schema's discriminator. */
function ajvDiscriminator(schema: Schema, defs: Schema): boolean {
  const d = schema.discriminator;
  if (!isObject(d) || typeof d.propertyName !== "string" || d.mapping !== undefined) return false;
  if (!Array.isArray(schema.oneOf)) return false;
  if (schema.type !== undefined && schema.type !== "object") return false;
  const topRequired = Array.isArray(schema.required) && schema.required.includes(d.propertyName);
  const seen = new Set<Json>();
  for (const branch of schema.oneOf) {
    const values = tagValues(branch, defs, d.propertyName, topRequired);
    if (!values) return false;
    for (const value of values) {
      if (typeof value !== "string" || seen.has(value)) return false;
      seen.add(value);
    }
  }
  return true;
}

/** Calls `visit` on `node` and every subschema below it (never on data or property maps). */
function forEachSchema(node: Json | undefined, visit: (schema: Schema) => void): void {
  if (!isObject(node)) return;
  visit(node);
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      for (const sub of Object.values(value)) forEachSchema(sub, visit);
    } else if (SCHEMA_ONE.has(key)) {
      forEachSchema(value, visit);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      for (const sub of value) forEachSchema(sub, visit);
    }
  }
}

/**
 * Drops the discriminators ajv would reject or read differently; adds type
 * "object" beside the others that have no type. Returns how many it added.
 */
function checkDiscriminators(defs: Schema, dropped: Map<string, number>): number {
  let added = 0;
  for (const def of Object.values(defs)) {
    forEachSchema(def, (schema) => {
      if (!("discriminator" in schema)) return;
      if (!ajvDiscriminator(schema, defs)) {
        delete schema.discriminator;
        const label = "discriminator (not usable by ajv)";
        dropped.set(label, (dropped.get(label) ?? 0) + 1);
      } else if (schema.type === undefined) {
        schema.type = "object";
        added++;
      }
    });
  }
  return added;
}

/**
 * The self-contained JSON Schema 2020-12 of `root` from the OpenAPI document
 * `doc`. Pure: no I/O, deterministic ($defs in name order).
 */
export function extractSchema(doc: unknown, root: Root, source: Source = {}): Schema {
  const version = openapiVersion(doc);
  const all = components(doc);
  const array = findArray(all, root);

  const defs: Schema = {};
  const dropped = new Map<string, number>();
  const count = (from: Map<string, number>) => {
    for (const [key, n] of from) dropped.set(key, (dropped.get(key) ?? 0) + n);
  };
  const queue = [root.element];
  const reached = new Set(queue);
  while (queue.length > 0) {
    const name = queue.shift() as string;
    const schema = all[name];
    if (schema === undefined) throw new Error(`$ref to a missing schema ${COMPONENT}${name}`);
    const translator = new Translator(name, schema);
    defs[name] = translator.schema(schema, `${COMPONENT}${name}`, true);
    count(translator.dropped);
    for (const ref of translator.refs) {
      if (!reached.has(ref)) {
        reached.add(ref);
        queue.push(ref);
      }
    }
  }

  // The array itself: its own keywords, items by reference.
  const { items: _items, ...arrayKeywords } = array;
  const top = new Translator(root.element);
  const arraySchema = top.schema(
    arrayKeywords,
    `${root.container.schema}.${root.container.property}`,
  );
  count(top.dropped);
  if (!isObject(arraySchema)) throw new Error("unreachable: the array schema is an object");

  const sortedDefs: Schema = {};
  for (const name of Object.keys(defs).sort()) sortedDefs[name] = defs[name] as Json;
  const added = checkDiscriminators(sortedDefs, dropped);

  const info = isObject(doc) && isObject(doc.info) ? doc.info : {};
  const from = [
    source.commit ? `commit ${source.commit}` : "commit unknown",
    `info.version ${typeof info.version === "string" ? info.version : "unknown"}`,
    `OpenAPI ${version}`,
    ...(source.sha256 ? [`sha256 ${source.sha256}`] : []),
  ].join(", ");
  const droppedNote = [...dropped]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, n]) => `${key} ×${n}`)
    .join(", ");
  return {
    $schema: DIALECT,
    $comment:
      `Generated by scripts/openai-schemas.ts from openai/openai-openapi openapi.json (${from}): ` +
      `${root.container.schema}.${root.container.property}, array of ${root.element}, ` +
      `and every schema it references. Do not edit; regenerate. ` +
      `Dropped keywords: ${droppedNote || "none"}. ` +
      `Added type "object" beside ${added} discriminator(s).`,
    title: root.title,
    ...arraySchema,
    type: "array",
    items: { $ref: `#/$defs/${root.element}` },
    $defs: sortedDefs,
  };
}

/** The fixture directory, test/fixtures/openai/. */
export const FIXTURES = fileURLToPath(new URL("../test/fixtures/openai/", import.meta.url));
const PROJECT = fileURLToPath(new URL("../", import.meta.url));
const DEFAULT_DOCUMENT = resolve(PROJECT, "../openai-openapi/openapi.json");

function gitCommit(file: string): string | undefined {
  try {
    const dir = dirname(file);
    const head = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" });
    const dirty = execFileSync("git", ["-C", dir, "status", "--porcelain", "--", file], {
      encoding: "utf8",
    });
    return `${head.trim()}${dirty.trim() ? " (modified)" : ""}`;
  } catch {
    return undefined;
  }
}

function main(args: string[]): void {
  let commit: string | undefined;
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--commit") commit = args[++i];
    else paths.push(args[i] as string);
  }
  const file = resolve(paths[0] ?? DEFAULT_DOCUMENT);
  if (!existsSync(file)) {
    console.error(
      `No OpenAPI document at ${file}.\n` +
        "Clone OpenAI's published spec beside this project:\n" +
        "  git clone https://github.com/openai/openai-openapi ../openai-openapi\n" +
        "or pass the path to its openapi.json: npx tsx scripts/openai-schemas.ts PATH [--commit SHA]",
    );
    process.exit(1);
  }
  const bytes = readFileSync(file);
  const source: Source = {
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
  const sourceCommit = commit ?? gitCommit(file);
  if (sourceCommit) source.commit = sourceCommit;
  const doc: unknown = JSON.parse(bytes.toString("utf8"));
  mkdirSync(FIXTURES, { recursive: true });
  for (const root of ROOTS) {
    const out = resolve(FIXTURES, root.file);
    writeFileSync(out, `${JSON.stringify(extractSchema(doc, root, source), null, 2)}\n`);
    // The project's formatter owns JSON layout too (biome check covers fixtures).
    execFileSync(resolve(PROJECT, "node_modules/.bin/biome"), ["format", "--write", out], {
      cwd: PROJECT,
      stdio: "ignore",
    });
    const schema = JSON.parse(readFileSync(out, "utf8")) as Schema;
    const defs = isObject(schema.$defs) ? Object.keys(schema.$defs).length : 0;
    console.log(`${out}: ${defs} schemas, ${readFileSync(out).length} bytes`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}
