import { Ajv } from 'ajv';
import type { AnySchema, Options, ValidateFunction } from 'ajv';
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

/** A compiled schema's check, whose `errors` say why the last value it checked failed. */
export type Validator<T> = ((value: unknown) => value is T) & { errors: ValidateFunction['errors'] };

/**
 * The check `compile` makes, compiled on its first call: a process compiles only the schemas it uses
 * (compiling them as modules load was a second of every server's start, and of every test file's).
 */
export function onFirstUse<T>(compile: () => ValidateFunction<T>): Validator<T> {
  let validate: ValidateFunction<T> | undefined;
  const check = Object.assign(
    (value: unknown): value is T => {
      validate ??= compile();
      const valid = validate(value);
      check.errors = validate.errors;
      return valid;
    },
    { errors: null as ValidateFunction['errors'] },
  );
  return check;
}

/** `schema`'s check by a validator of `createAjv`, compiled on its first call (`onFirstUse`). */
export function compiledOnFirstUse<T>(schema: AnySchema): Validator<T> {
  return onFirstUse(() => createAjv().compile<T>(schema));
}
