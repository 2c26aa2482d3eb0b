import type { TSchema } from 'typebox';
import {
  ActionDefinitionSchema,
  BotManifestSchema,
  FORMAT_VERSION,
  KnowledgeBaseDefinitionSchema,
  TableDefinitionSchema,
  WorkflowSchema,
} from './format.ts';

/**
 * The JSON Schemas of the package's data files, published in `schemas/` for editors and used by the
 * loader to validate: one document serves both, so what an editor accepts is what a deploy accepts.
 * Draft-07, because it is the draft every editor and ajv's default build understand.
 */
export const JSON_SCHEMA_DRAFT = 'http://json-schema.org/draft-07/schema#';

export type JsonSchemaDocument = Record<string, unknown>;

export const PACKAGE_SCHEMAS = {
  bot: {
    file: 'bot.schema.json',
    title: 'Parley bot manifest (bot.json)',
    description:
      'The manifest of a Parley bot package: name, configuration variables and secrets, variable catalogue, channel settings, schedules and custom event types.',
    schema: BotManifestSchema,
  },
  workflow: {
    file: 'workflow.schema.json',
    title: 'Parley workflow (workflows/<name>.json)',
    description:
      'A workflow of a Parley bot package: its nodes, their cards and transitions, and triggers. `workflows/main.json` is required.',
    schema: WorkflowSchema,
  },
  action: {
    file: 'action.schema.json',
    title: 'Parley action (actions/<name>.json)',
    description:
      'An action of a Parley bot package: its input and output JSON Schemas and caching; its code is actions/<name>.ts or .js.',
    schema: ActionDefinitionSchema,
  },
  knowledge: {
    file: 'knowledge.schema.json',
    title: 'Parley knowledge base (knowledge/<name>.json)',
    description:
      'A knowledge base of a Parley bot package: the documents of the package folder it holds. parley deploy creates it, uploads its changed documents and indexes them; knowledge cards search it.',
    schema: KnowledgeBaseDefinitionSchema,
  },
  table: {
    file: 'table.schema.json',
    title: 'Parley table (tables/<name>.json)',
    description:
      'A table of a Parley bot package: its name, columns (a JSON Schema or an example row), key column, tags and factor. parley deploy creates it, or adds the columns it gained (removing or retyping a column needs --allow-destructive); table cards read and write it.',
    schema: TableDefinitionSchema,
  },
} as const satisfies Record<string, { file: string; title: string; description: string; schema: TSchema }>;

export type PackageSchemaKind = keyof typeof PACKAGE_SCHEMAS;

/**
 * TypeBox 1.x writes `Type.Record(Name, X)` as `patternProperties` alone, which lets a key that is no
 * Name through unchecked. The record's intent is that every key is a Name, so such objects get
 * `additionalProperties: false` (the JSON Schema way of saying "only keys matching the patterns").
 */
function closeRecords(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeRecords);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = closeRecords(value);
  const patterns = Object.keys((out.patternProperties as object | undefined) ?? {});
  const catchAll = patterns.length === 1 && patterns[0] === '^.*$';
  if (patterns.length && !catchAll && !('properties' in out) && !('additionalProperties' in out)) {
    out.additionalProperties = false;
  }
  return out;
}

/** The published document of one kind of data file: plain JSON, with `$schema`, `$id`, `title`, `description`. */
export function packageSchema(kind: PackageSchemaKind): JsonSchemaDocument {
  const { file, title, description, schema } = PACKAGE_SCHEMAS[kind];
  // Through JSON: TypeBox's symbol-keyed metadata is not part of the schema.
  const plain = closeRecords(JSON.parse(JSON.stringify(schema))) as JsonSchemaDocument;
  return {
    $schema: JSON_SCHEMA_DRAFT,
    $id: `urn:parley:package:${FORMAT_VERSION}:${file}`,
    title,
    description,
    ...plain,
  };
}

/** Every published schema by its file name under `schemas/`. */
export function packageSchemaFiles(): Record<string, JsonSchemaDocument> {
  return Object.fromEntries(
    (Object.keys(PACKAGE_SCHEMAS) as PackageSchemaKind[]).map((kind) => [
      PACKAGE_SCHEMAS[kind].file,
      packageSchema(kind),
    ]),
  );
}
