import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { invalidPayload } from '../shared/errors.ts';
import type { BotRuntime } from '../../value-sets.ts';

export const SDK_RUNTIME = 'botpress-sdk' satisfies BotRuntime;

/**
 * What is wrong with a document that says it is a Parley bot package (a JSON object with a `parley`
 * key), or undefined when the engine can load it. The format is the bot package's
 * (`package/compiled.ts`), which builds on the domain: so the domain is given it (`createDomain`).
 */
export type PackageCheck = (document: object) => string | undefined;

/**
 * Which runtime runs this code: a compiled Parley bot package (what `parley deploy` uploads) runs in
 * the engine; a CommonJS bundle (what `bp deploy` uploads) runs as an SDK bot; no code (null or empty)
 * is no runtime. Code that neither could run is refused rather than kept unrun (a deploy that is
 * accepted and never runs would be the worst answer); so is a document that claims to be a Parley
 * package but is malformed, so the engine never loads a broken one.
 */
function runtimeOf(code: string | null, checkPackage: PackageCheck): BotRuntime | null {
  if (code === null || code.trim() === '') return null;
  if (!code.startsWith('{')) return sdkBundle(code);
  let parsed: unknown;
  try {
    parsed = JSON.parse(code);
  } catch {
    throw invalidPayload(NOT_RUNNABLE);
  }
  if (typeof parsed !== 'object' || parsed === null || !('parley' in parsed))
    throw invalidPayload(NOT_RUNNABLE);
  const problem = checkPackage(parsed);
  if (problem !== undefined)
    throw invalidPayload(`code is not a valid Parley bot package: ${problem}`.trim());
  return 'parley';
}

/**
 * Whether this server runs SDK bundles: the engine tells once its OS sandbox is open (or why it could not
 * be). A deploy of one where none can run is refused with the reason, never accepted to sit unrun.
 * Parley packages are checked against the format the slot is made with.
 */
export class SdkRuntimeSlot {
  private unavailable: () => string | undefined = () => 'no engine runs them in this process';

  constructor(private readonly checkPackage: PackageCheck) {}

  use(unavailable: () => string | undefined): void {
    this.unavailable = unavailable;
  }

  /** The runtime of `code` (runtimeOf), refused when it is an SDK bundle and none can run here. */
  runtimeOf(code: string | null): BotRuntime | null {
    const runtime = runtimeOf(code, this.checkPackage);
    const why = runtime === SDK_RUNTIME ? this.unavailable() : undefined;
    if (why !== undefined)
      throw invalidPayload(`code: bundles built by \`bp build\` cannot run on this server: ${why}`);
    return runtime;
  }
}

const NOT_RUNNABLE =
  'code is neither a Parley bot package (what `parley deploy` uploads) nor a CommonJS bundle built by `bp build` (what `bp deploy` uploads)';

/**
 * An SDK bundle is compiled here, never run: code with a syntax error is refused at deploy rather than
 * failing each event. It is wrapped as Node wraps a CommonJS module.
 */
function sdkBundle(code: string): BotRuntime {
  try {
    new Script(`(function (exports, require, module, __filename, __dirname) {${code}\n})`);
  } catch (err) {
    throw invalidPayload(`${NOT_RUNNABLE}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return SDK_RUNTIME;
}

/** Names a version of a bot's code: the same code, the same name (a runtime's caches key on it). */
export function codeVersion(botId: string, code: string): string {
  return `${botId}@${createHash('sha256').update(code).digest('hex').slice(0, 16)}`;
}
