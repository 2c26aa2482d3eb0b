import { Ajv } from 'ajv';
import type { Options } from 'ajv';
import formats from 'ajv-formats';
import type { FormatsPlugin } from 'ajv-formats';

// ajv-formats is CommonJS: under ESM its plugin arrives as the default export's `default`.
const addFormats = ((formats as unknown as { default?: FormatsPlugin }).default ?? formats) as FormatsPlugin;

/**
 * A JSON Schema validator as Parley uses them everywhere: formats known (date-time, email, ...),
 * unknown keywords tolerated (user schemas carry titles, examples...), values never coerced.
 */
export function createAjv(options: Options = {}): Ajv {
  return addFormats(new Ajv({ strict: false, allErrors: false, coerceTypes: false, ...options }));
}
