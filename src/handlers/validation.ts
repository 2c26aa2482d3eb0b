import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import fastJsonStringify from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import { createAjv } from '../domain/shared/json-schema.ts';
import { MAX_JSON_DEPTH, tooDeep, withInputRules } from '../contract/input-rules.ts';
import { NAMED_MODELS } from '../contract/models.ts';

const common: Options = {
  useDefaults: true,
  // Unknown properties are ignored, except where a schema forbids them: then they are an error.
  removeAdditional: false,
  allErrors: false,
  // Lets a union keyed by `type` (message payloads) report the field that is wrong in the branch that applies.
  discriminator: true,
  strict: false,
};

/** JSON (bodies, and the arguments bot code passes) keeps its types: `5` is no string, `null` no empty string. */
const json = createAjv({ ...common, coerceTypes: false });
/** Query strings, path parameters and headers are text: `pageSize=20` is a number, one `ids=a` is an array. */
const text = createAjv({ ...common, coerceTypes: 'array' });
// An operation's schema may reference a named model by its `$id`, wherever it is compiled.
for (const model of NAMED_MODELS) {
  json.addSchema(withInputRules(model));
  text.addSchema(withInputRules(model));
}
/** The named models by `$id`, as fast-json-stringify resolves the references of an answer schema. */
const namedModels = Object.fromEntries(NAMED_MODELS.map((model) => [model.$id, model]));

// Compiled once per schema object: the HTTP routes and the in-process client share an operation's.
const jsonValidators = new WeakMap<TSchema, ValidateFunction>();
const textValidators = new WeakMap<TSchema, ValidateFunction>();
const serializers = new WeakMap<TSchema, (value: unknown) => string>();

function once<T>(cache: WeakMap<TSchema, T>, schema: TSchema, compile: () => T): T {
  let compiled = cache.get(schema);
  if (compiled === undefined) {
    compiled = compile();
    cache.set(schema, compiled);
  }
  return compiled;
}

/** A validator of JSON values: HTTP bodies and the in-process client's arguments. */
export function jsonValidator(schema: TSchema): ValidateFunction {
  return once(jsonValidators, schema, () => withDepthLimit(json.compile(withInputRules(schema))));
}

/** A validator of values that arrived as text: query strings, path parameters, headers. */
export function textValidator(schema: TSchema): ValidateFunction {
  return once(textValidators, schema, () => withDepthLimit(text.compile(withInputRules(schema))));
}

/**
 * A serializer compiled on its first call, as validators are (`onFirstUse`): the server declares hundreds
 * of answer schemas and a process answers few of their operations.
 */
export function serializerOnFirstUse(compile: () => (value: unknown) => string): (value: unknown) => string {
  let serialize: ((value: unknown) => string) | undefined;
  return (value) => (serialize ??= compile())(value);
}

/** The schema's validation, and then the depth rule of input-rules.ts, reported the way ajv reports. */
function withDepthLimit(validate: ValidateFunction): ValidateFunction {
  const checked = Object.assign(
    (data: unknown): data is unknown => {
      if (!validate(data)) {
        checked.errors = validate.errors;
        return false;
      }
      const path = tooDeep(data);
      checked.errors = path === undefined ? null : [depthError(path)];
      return path === undefined;
    },
    { schema: validate.schema, schemaEnv: validate.schemaEnv, errors: null as ValidateFunction['errors'] },
  );
  return checked;
}

function depthError(path: string): ErrorObject {
  return {
    instancePath: path,
    schemaPath: '#',
    keyword: 'maxDepth',
    params: { limit: MAX_JSON_DEPTH },
    message: `nests deeper than ${MAX_JSON_DEPTH} levels`,
  };
}

/**
 * The serializer of an answer schema: it writes what the schema describes and drops anything else.
 * The HTTP routes and the in-process client both use it, so they answer the same JSON.
 */
export function serializerFor(schema: TSchema): (value: unknown) => string {
  return once(serializers, schema, () => fastJsonStringify(schema, { schema: namedModels }));
}
