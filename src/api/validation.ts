import { Ajv } from 'ajv';
import type { Options } from 'ajv';
import formats from 'ajv-formats';
import type { FormatsPlugin } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS: under ESM its plugin arrives as the default export's `default`.
const addFormats = ((formats as unknown as { default?: FormatsPlugin }).default ?? formats) as FormatsPlugin;

const common: Options = {
  useDefaults: true,
  // Unknown properties are ignored, except where a schema forbids them: then they are an error.
  removeAdditional: false,
  allErrors: false,
  // Lets a union keyed by `type` (message payloads) report the field that is wrong in the branch that applies.
  discriminator: true,
  strict: false,
};

/** JSON bodies keep their types: `5` is no string, `null` is no empty string. */
const bodies = addFormats(new Ajv({ ...common, coerceTypes: false }));
/** Query strings, path parameters and headers are text: `pageSize=20` is a number, one `ids=a` is an array. */
const texts = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodies : texts).compile(schema);
