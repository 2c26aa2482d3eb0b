import type { Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { createAjv } from '../domain/json-schema.ts';

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
const bodies = createAjv({ ...common, coerceTypes: false });
/** Query strings, path parameters and headers are text: `pageSize=20` is a number, one `ids=a` is an array. */
const texts = createAjv({ ...common, coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodies : texts).compile(schema);
