/**
 * What every valid input is, whatever the operation: rules added to each schema when it is compiled,
 * so every route and bot code's client inherit them, and no operation can forget one.
 *
 * - A string field holds no NUL character (`\u0000`): PostgreSQL text cannot keep one. (Free JSON,
 *   such as a message payload, is stored as JSON text, where a NUL is escaped: it may hold one.)
 * - An object's keys hold none either, where the schema names what the keys are (tag maps...).
 * - A number is finite, and an integer a safe one, unless the schema bounds it more narrowly.
 * - A value nests at most MAX_JSON_DEPTH levels deep: deeper, some of what handles it would run out
 *   of stack.
 */

/** The deepest a JSON value of a request may nest. */
export const MAX_JSON_DEPTH = 64;

const NO_NUL = '^[^\\u0000]*$';

type SchemaNode = { [key: string]: unknown };

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy of `schema` with the rules above on each of its sub-schemas (the original is left as is). */
export function withInputRules(schema: object): SchemaNode {
  return ruled(schema);
}

function transform(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(transform);
  return isNode(value) ? ruled(value) : value;
}

function ruled(schema: object): SchemaNode {
  const node: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) {
    // `properties` and `patternProperties` map names to schemas; `enum` and `const` are values.
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') node[key] = value;
    else if ((key === 'properties' || key === 'patternProperties' || key === '$defs') && isNode(value)) {
      node[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, transform(v)]));
    } else node[key] = transform(value);
  }
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('string') && node.pattern === undefined && node.format === undefined)
    node.pattern = NO_NUL;
  if (
    types.includes('object') &&
    (node.patternProperties !== undefined || isNode(node.additionalProperties))
  ) {
    node.propertyNames ??= { pattern: NO_NUL };
  }
  if (types.includes('integer')) {
    node.maximum ??= Number.MAX_SAFE_INTEGER;
    node.minimum ??= Number.MIN_SAFE_INTEGER;
  } else if (types.includes('number')) {
    node.maximum ??= Number.MAX_VALUE;
    node.minimum ??= -Number.MAX_VALUE;
  }
  return node;
}

/** Where a value nests deeper than MAX_JSON_DEPTH, if it does (walked without recursion). */
export function tooDeep(value: unknown): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value: at, depth, path } = stack.pop() ?? { value: undefined, depth: 0, path: '' };
    if (typeof at !== 'object' || at === null) continue;
    if (depth >= MAX_JSON_DEPTH) return path;
    for (const [key, child] of Object.entries(at))
      stack.push({ value: child, depth: depth + 1, path: `${path}/${key}` });
  }
  return undefined;
}
