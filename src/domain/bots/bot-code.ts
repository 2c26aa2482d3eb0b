import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { createAjv } from '../shared/json-schema.ts';
import { Type } from 'typebox';
import {
  ActionDefinitionSchema,
  BotManifestSchema,
  FORMAT_VERSION,
  HOOK_TYPES,
  WorkflowSchema,
} from '../../package/format.ts';
import type { CompiledPackage } from '../../package/format.ts';
import { invalidPayload } from '../shared/errors.ts';
import type { BotRuntime } from '../../store/schema.ts';

export const SDK_RUNTIME = 'botpress-sdk' satisfies BotRuntime;

const CompiledPackageSchema = Type.Object({
  parley: Type.Literal(FORMAT_VERSION),
  manifest: BotManifestSchema,
  actions: Type.Record(Type.String(), ActionDefinitionSchema),
  hooks: Type.Object(
    Object.fromEntries(HOOK_TYPES.map((h) => [h, Type.Optional(Type.Array(Type.String()))])),
  ),
  workflows: Type.Record(Type.String(), WorkflowSchema),
  units: Type.Record(Type.String(), Type.String()),
});

const validate = createAjv().compile(CompiledPackageSchema);

/**
 * Which runtime runs this code: a compiled Parley bot package (what `parley deploy` uploads) runs in
 * the engine; a CommonJS bundle (what `bp deploy` uploads) runs as an SDK bot; no code (null or empty)
 * is no runtime. Code that neither could run is refused rather than kept unrun (a deploy that is
 * accepted and never runs would be the worst answer); so is a document that claims to be a Parley
 * package but is malformed, so the engine never loads a broken one.
 */
export function runtimeOf(code: string | null): BotRuntime | null {
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
  if (!validate(parsed)) {
    const first = validate.errors?.[0];
    throw invalidPayload(
      `code is not a valid Parley bot package: ${first?.instancePath ?? ''} ${first?.message ?? ''}`.trim(),
    );
  }
  return 'parley';
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

/** The package of code `runtimeOf` accepted. */
export function parsePackage(code: string): CompiledPackage {
  return JSON.parse(code) as CompiledPackage;
}
