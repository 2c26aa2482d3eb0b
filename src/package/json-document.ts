import { parseTree, printParseErrorCode } from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';
import { pointer } from './problems.ts';
import type { Problem } from './problems.ts';

const SYNTAX_MESSAGES: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: 'expected ":"',
  CommaExpected: 'expected ","',
  CloseBraceExpected: 'expected "}"',
  CloseBracketExpected: 'expected "]"',
  EndOfFileExpected: 'expected the end of the file',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'unterminated comment',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'unterminated number',
  InvalidUnicode: 'invalid unicode escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string',
};

export function parsePointer(field: string): string[] {
  if (field === '') return [];
  return field
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * A parsed JSON file that keeps its syntax tree, so that a problem found in the value (by a JSON
 * pointer) can be reported at the line and column where the developer wrote it.
 */
export class JsonDocument {
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly file: string,
    private readonly text: string,
    private readonly root: Node | undefined,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** 1-based line and column (in UTF-16 code units, as editors count) of a character offset. */
  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - (this.lineStarts[low] as number) + 1 };
  }

  /**
   * The node a pointer names, or its nearest ancestor that exists (a missing property is reported
   * on the object that lacks it). `key` points at the property's name instead of its value.
   */
  nodeAt(field: string, key = false): Node | undefined {
    let node = this.root;
    let property: Node | undefined;
    for (const segment of parsePointer(field)) {
      let child: Node | undefined;
      property = undefined;
      if (node?.type === 'object') {
        // The last of duplicate keys, as JSON.parse keeps the last.
        property = node.children?.findLast((p) => p.children?.[0]?.value === segment);
        child = property?.children?.[1];
      } else if (node?.type === 'array' && /^\d+$/.test(segment)) {
        child = node.children?.[Number(segment)];
      }
      if (!child) return node;
      node = child;
    }
    return key && property ? property : node;
  }

  problem(field: string, message: string, options: { key?: boolean } = {}): Problem {
    const node = this.nodeAt(field, options.key);
    const { line, column } = this.position(node?.offset ?? 0);
    return { file: this.file, line, column, field, message };
  }
}

export type ParsedJson = { ok: true; doc: JsonDocument; value: unknown } | { ok: false; problems: Problem[] };

/**
 * Strict JSON (no comments, no trailing commas: the files are read by other tools too), parsed with
 * jsonc-parser for positions. Reports the first syntax error only: the ones after it are mostly echoes.
 */
export function parseJson(file: string, raw: string): ParsedJson {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  const doc = new JsonDocument(file, text, root);
  const first = errors[0];
  if (first || !root) {
    const offset = first?.offset ?? 0;
    const { line, column } = doc.position(offset);
    let message = first
      ? (SYNTAX_MESSAGES[printParseErrorCode(first.error)] ?? 'syntax error')
      : 'empty file';
    if (first && /,\s*$/.test(text.slice(0, offset)) && /^[}\]]/.test(text.slice(offset))) {
      message = 'trailing commas are not allowed in JSON';
    }
    return { ok: false, problems: [{ file, line, column, field: '', message: `invalid JSON: ${message}` }] };
  }
  const duplicates = duplicateKeys(doc, root, []);
  if (duplicates.length) return { ok: false, problems: duplicates };
  // Strict JSON without syntax errors: JSON.parse reads the same value, as plain objects.
  return { ok: true, doc, value: JSON.parse(text) as unknown };
}

/** A repeated key is legal JSON but almost always a mistake: one of the two values is silently lost. */
function duplicateKeys(doc: JsonDocument, node: Node, path: (string | number)[]): Problem[] {
  const problems: Problem[] = [];
  if (node.type === 'object') {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const [keyNode, valueNode] = property.children ?? [];
      const key = String(keyNode?.value);
      if (seen.has(key)) {
        const { line, column } = doc.position(property.offset);
        problems.push({
          file: doc.file,
          line,
          column,
          field: pointer(...path, key),
          message: 'duplicate property',
        });
      }
      seen.add(key);
      if (valueNode) problems.push(...duplicateKeys(doc, valueNode, [...path, key]));
    }
  } else if (node.type === 'array') {
    node.children?.forEach((child, i) => problems.push(...duplicateKeys(doc, child, [...path, i])));
  }
  return problems;
}

/** A JSON file that parsed and matched its schema. */
export interface LoadedJson<T> {
  doc: JsonDocument;
  value: T;
  /**
   * A workflow whose only schema problems are inside some of its nodes or cards: those, which the
   * checks leave alone. The rest of the file is still checked, so one run reports every problem.
   */
  broken?: BrokenParts;
}

/** Nodes (by index) and cards (`node/card` indexes) that did not match the workflow schema. */
export interface BrokenParts {
  nodes: Set<number>;
  cards: Set<string>;
}
