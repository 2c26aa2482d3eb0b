import { parenthesize } from './compile.ts';
import { pointer } from './problems.ts';

/**
 * `{{ expression }}` in card fields. The expression ends at the first `}}`: an expression that needs
 * `}}` itself (an object literal in an object literal) is written with a space, `} }`.
 */
const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;

/** One `{{ }}` found in a field, with the JSON pointer of the string that holds it (relative to the field). */
export interface TemplateExpression {
  field: string;
  expression: string;
}

/** Every `{{ }}` in the strings of a JSON value (keys are never templated). */
export function templateExpressions(value: unknown, path: (string | number)[] = []): TemplateExpression[] {
  if (typeof value === 'string') {
    return [...value.matchAll(TEMPLATE)].map((m) => ({ field: pointer(...path), expression: m[1] ?? '' }));
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => templateExpressions(v, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => templateExpressions(v, [...path, k]));
  }
  return [];
}

function renderString(text: string): string {
  const matches = [...text.matchAll(TEMPLATE)];
  if (matches.length === 0) return JSON.stringify(text);
  // Exactly one `{{ }}` and nothing else: the expression's value, of whatever JSON type.
  if (matches.length === 1 && matches[0]?.[0] === text) return parenthesize(matches[0][1] ?? '');
  const parts: string[] = [];
  let last = 0;
  for (const m of matches) {
    if (m.index > last) parts.push(JSON.stringify(text.slice(last, m.index)));
    parts.push(`String(${parenthesize(m[1] ?? '')} ?? '')`);
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(JSON.stringify(text.slice(last)));
  return parts.join(' + ');
}

/**
 * A JavaScript expression that rebuilds the value with every template rendered. Keys are computed
 * (`["__proto__"]: …` defines a property instead of setting the prototype).
 */
export function renderTemplate(value: unknown): string {
  if (typeof value === 'string') return renderString(value);
  if (Array.isArray(value)) return `[${value.map(renderTemplate).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `[${JSON.stringify(k)}]: ${renderTemplate(v)}`);
    return `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The body of a template unit: returns the field's JSON with every template rendered. */
export const templateBody = (value: unknown) => `return ${renderTemplate(value)};`;

/** The body of a condition unit. */
export const conditionBody = (expression: string) => `return Boolean${parenthesize(expression)};`;
