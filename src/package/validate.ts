import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parsePointer } from './json-document.ts';
import { JSON_SCHEMA_DRAFT, packageSchema } from './schemas.ts';
import type { JsonSchemaDocument, PackageSchemaKind } from './schemas.ts';

/** A schema violation: the field (JSON pointer) and a message; `key` when it is about a property's name. */
export interface SchemaIssue {
  field: string;
  message: string;
  key?: boolean;
}

// allErrors: every problem of a file at once. verbose: the failing schema comes with each error, which
// the messages below use (allowed property names, union branches).
const ajv = new Ajv({ allErrors: true, verbose: true, strictTypes: false, strictTuples: false });

const compiled = new Map<PackageSchemaKind, { schema: JsonSchemaDocument; validate: ValidateFunction }>();

function validatorOf(kind: PackageSchemaKind) {
  let entry = compiled.get(kind);
  if (!entry) {
    const schema = packageSchema(kind);
    entry = { schema, validate: ajv.compile(schema) };
    compiled.set(kind, entry);
  }
  return entry;
}

/** Validates a data file's value against its published schema; no issues when it conforms. */
export function validateAgainst(kind: PackageSchemaKind, value: unknown): SchemaIssue[] {
  const { schema, validate } = validatorOf(kind);
  if (validate(value)) return [];
  return describeErrors(narrowUnions(validate.errors ?? [], schema, value));
}

/** Whether a user-supplied JSON Schema (an action's input, an event's payload) is itself valid. */
export function jsonSchemaProblem(schema: unknown): string | undefined {
  const draft = (schema as { $schema?: unknown }).$schema;
  // Checked against draft-07 (the default); a schema that names another draft is taken as it is.
  if (draft !== undefined && draft !== JSON_SCHEMA_DRAFT && draft !== JSON_SCHEMA_DRAFT.replace(/#$/, '')) {
    return undefined;
  }
  if (ajv.validateSchema(schema as object)) return undefined;
  return ajv.errorsText(ajv.errors, { dataVar: 'schema' });
}

function resolve(root: unknown, segments: string[]): unknown {
  let node = root;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The property whose `const` tells the branches of a union apart (a card's `type`, a trigger's `kind`). */
function discriminatorOf(branches: unknown[]): string | undefined {
  const first = branches[0];
  if (!isRecord(first) || !isRecord(first.properties)) return undefined;
  return Object.keys(first.properties).find((key) =>
    branches.every(
      (b) =>
        isRecord(b) && isRecord(b.properties) && isRecord(b.properties[key]) && 'const' in b.properties[key],
    ),
  );
}

function constOf(branch: unknown, key: string): unknown {
  return isRecord(branch) && isRecord(branch.properties) && isRecord(branch.properties[key])
    ? branch.properties[key].const
    : undefined;
}

function pickBranch(branches: unknown[], data: unknown, key: string | undefined): number {
  if (key) return isRecord(data) ? branches.findIndex((b) => constOf(b, key) === data[key]) : -1;
  const type = jsonType(data);
  return branches.findIndex(
    (b) => isRecord(b) && (b.type === type || (b.type === 'number' && type === 'integer')),
  );
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function within(error: ErrorObject, union: ErrorObject, prefix: string): boolean {
  const path = error.instancePath;
  return (
    error.schemaPath.startsWith(prefix) &&
    (path === union.instancePath || path.startsWith(`${union.instancePath}/`))
  );
}

/**
 * With `anyOf`, ajv reports the failures of every branch, which for a card means eight lists of
 * complaints about the seven kinds of card it is not. The branch that applies is chosen like a
 * discriminator would (by `type`/`kind`, or by JSON type) and only its errors are kept; when none
 * applies, one error says what the union accepts.
 */
function narrowUnions(errors: ErrorObject[], schema: JsonSchemaDocument, value: unknown): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const replaced = new Map<ErrorObject, ErrorObject>();
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const branches = resolve(schema, parsePointer(union.schemaPath.slice(1)));
    if (!Array.isArray(branches)) continue;
    const data = resolve(value, parsePointer(union.instancePath));
    const key = discriminatorOf(branches);
    const chosen = pickBranch(branches, data, key);
    const prefix = `${union.schemaPath}/`;
    for (const e of errors) {
      if (e !== union && within(e, union, prefix) && !e.schemaPath.startsWith(`${prefix}${chosen}/`))
        dropped.add(e);
    }
    if (chosen >= 0) {
      dropped.add(union);
    } else if (key && isRecord(data)) {
      const allowed = branches.map((b) => JSON.stringify(constOf(b, key))).join(', ');
      replaced.set(union, {
        ...union,
        instancePath: `${union.instancePath}/${key}`,
        message: data[key] === undefined ? `is required: one of ${allowed}` : `must be one of ${allowed}`,
      });
    } else {
      const types = [
        ...new Set(branches.map((b) => (isRecord(b) && typeof b.type === 'string' ? b.type : 'value'))),
      ];
      replaced.set(union, { ...union, message: `must be ${types.map(article).join(' or ')}` });
    }
  }
  return errors.filter((e) => !dropped.has(e)).map((e) => replaced.get(e) ?? e);
}

function describeErrors(errors: ErrorObject[]): SchemaIssue[] {
  const issues = new Map<string, SchemaIssue>();
  for (const error of errors) {
    const issue = describe(error);
    issues.set(`${issue.field}\n${issue.message}`, issue);
  }
  return [...issues.values()];
}

function describe(error: ErrorObject): SchemaIssue {
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  const parent = isRecord(error.parentSchema) ? error.parentSchema : {};
  switch (error.keyword) {
    case 'anyOf':
      return { field: at, message: error.message ?? 'is invalid' };
    case 'required':
      return { field: `${at}/${String(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const field = `${at}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (isRecord(parent.patternProperties)) {
        const patterns = Object.keys(parent.patternProperties).join(' or ');
        return { field, key: true, message: `"${name}" is not a valid name: it must match ${patterns}` };
      }
      const known = isRecord(parent.properties) ? Object.keys(parent.properties) : [];
      return { field, key: true, message: `unknown property (allowed: ${known.join(', ')})` };
    }
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return { field: at, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
    }
    case 'const':
      return { field: at, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'type':
      return { field: at, message: `must be ${String(params.type).split(',').map(article).join(' or ')}` };
    case 'pattern': {
      const hint = typeof parent.description === 'string' ? ` (${parent.description})` : '';
      return { field: at, message: `must match ${String(params.pattern)}${hint}` };
    }
    default:
      return { field: at, message: error.message ?? `fails ${error.keyword}` };
  }
}
