import { build, transform } from 'esbuild';
import type { Message } from 'esbuild';

/**
 * Compiles bot code to "units": the source of an async function BODY in plain JavaScript (see
 * format.ts). esbuild compiles whole programs, not bodies, so the body is wrapped in a function,
 * compiled, and unwrapped from esbuild's output.
 */

export type Loader = 'ts' | 'js';

/** A problem in a piece of code, at a 1-based line and column of that code. */
export interface CodeIssue {
  line: number;
  column: number;
  message: string;
}

export type Compiled = { ok: true; body: string } | { ok: false; issues: CodeIssue[] };

const OPEN = 'async function __unit() {\n';
const CLOSE = '\n}';
const NO_MODULES =
  'code cannot import modules (no import, import() or require): it is the body of a function with event, workflow, conversation, user, bot, env, turn, client, actions, console and fetch in scope';

// Parses without running: the Function constructors compile a body and return a function that is never called.
const AsyncFunction = (Object.getPrototypeOf(async function () {}) as { constructor: unknown })
  .constructor as new (body: string) => unknown;

function messagesOf(err: unknown): Message[] | undefined {
  const errors = (err as { errors?: unknown }).errors;
  return Array.isArray(errors) ? (errors as Message[]) : undefined;
}

/** An esbuild message about the wrapped source, placed in the code itself (the wrapper adds one line above). */
function issueOf(message: Message, code: string): CodeIssue {
  const lines = code.split('\n');
  const location = message.location;
  let text = message.text;
  if (!location) return { line: 1, column: 1, message: text };
  let line = location.line - 1;
  // esbuild counts columns in bytes; editors count characters.
  let column = Buffer.from(location.lineText).subarray(0, location.column).toString().length + 1;
  if (line > lines.length) {
    line = lines.length;
    column = (lines[line - 1] ?? '').length + 1;
  }
  if (line < 1) line = 1;
  // `import x from 'y'` inside a function body is a syntax error; say why it is not allowed instead.
  if (/^\s*(import|export)\b(?!\s*\()/.test(location.lineText)) {
    text = NO_MODULES;
    column = location.lineText.search(/\S/) + 1;
  }
  return { line, column, message: text };
}

/** Compiles a function body (TypeScript or JavaScript) to a JavaScript function body. */
export async function compileBody(code: string, loader: Loader, sourcefile: string): Promise<Compiled> {
  const wrapped = `${OPEN}${code}${CLOSE}`;
  let output: string;
  try {
    output = (
      await transform(wrapped, {
        loader,
        target: 'es2022',
        sourcefile,
        legalComments: 'none',
        logLevel: 'silent',
      })
    ).code;
  } catch (err) {
    const messages = messagesOf(err);
    if (!messages) throw err;
    return { ok: false, issues: messages.map((m) => issueOf(m, code)) };
  }
  // Helpers esbuild needs (for decorators, say) come before the function: they move into the body.
  const start = output.indexOf(OPEN);
  const end = output.lastIndexOf('}');
  if (start < 0 || end < start || output.slice(end).trim() !== '}') {
    throw new Error(`esbuild printed an unexpected shape for ${sourcefile}`);
  }
  const body = output.slice(0, start) + output.slice(start + OPEN.length, end);
  // A body with an unbalanced `}` can close the wrapper early and open another function: the wrapped
  // program is then valid but the unwrapped body is not. Parsing the body as an async function body
  // (what the sandbox does) settles it.
  try {
    new AsyncFunction(body);
  } catch {
    return {
      ok: false,
      issues: [
        { line: 1, column: 1, message: 'the code is not a function body: an unbalanced "}" closes it early' },
      ],
    };
  }
  const modules = /\b(import|require)\b/.test(code)
    ? await moduleUses(wrapped, code, loader, sourcefile)
    : [];
  return modules.length ? { ok: false, issues: modules } : { ok: true, body };
}

/**
 * Finds `import(...)`, `require(...)` and any other use of `require` (no false alarms on the words in
 * strings or comments): esbuild bundles the code with a resolver that refuses everything, and with
 * import() lowered to require so that non-literal imports show up as esbuild's require shim.
 */
async function moduleUses(
  wrapped: string,
  code: string,
  loader: Loader,
  sourcefile: string,
): Promise<CodeIssue[]> {
  try {
    const result = await build({
      stdin: { contents: `export ${wrapped}`, loader, sourcefile },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      logLevel: 'silent',
      supported: { 'dynamic-import': false },
      plugins: [
        {
          name: 'parley-no-modules',
          setup(b) {
            b.onResolve({ filter: /.*/ }, (args) => ({
              errors: [{ text: `${NO_MODULES} ("${args.path}")` }],
            }));
          },
        },
      ],
    });
    if (!result.outputFiles.some((f) => f.text.includes('__require'))) return [];
    const lines = code.split('\n');
    // Found for sure; where is a best guess (the first line that says it).
    const word = /\b(require|import)\b/;
    const index = lines.findIndex((l) => word.test(l));
    const line = index < 0 ? 1 : index + 1;
    const column = index < 0 ? 1 : (lines[index] ?? '').search(word) + 1;
    return [{ line, column, message: NO_MODULES }];
  } catch (err) {
    const messages = messagesOf(err);
    if (!messages) throw err;
    return messages.map((m) => issueOf(m, code));
  }
}

async function parses(source: string): Promise<string | undefined> {
  try {
    await transform(source, { loader: 'js', logLevel: 'silent' });
    return undefined;
  } catch (err) {
    const messages = messagesOf(err);
    if (!messages) throw err;
    return messages[0]?.text ?? 'syntax error';
  }
}

/**
 * Checks that a JavaScript expression (a condition, a template's `{{ }}`) is exactly one expression,
 * so that it can be pasted between parentheses. Two parses: `void <expr>` as a program proves its
 * brackets balance (it cannot close the parentheses around it), `(<expr>)` that it is an expression.
 */
export async function expressionProblem(expression: string): Promise<string | undefined> {
  if (!expression.trim()) return 'the expression is empty';
  const problem = (await parses(`void\n${expression}\n;`)) ?? (await parses(`(\n${expression}\n);`));
  return problem && `\`${expression.trim()}\` is not one JavaScript expression: ${problem}`;
}

/** Between parentheses and on lines of its own, so that a trailing `// comment` cannot swallow the rest. */
export const parenthesize = (expression: string) => `(\n${expression}\n)`;
