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

/** The runtimes that can run a bot's uploaded code here. */
export type BotRuntime = 'parley';

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

/** Why code that is no Parley package is refused: a deploy that would never run says so. */
export const UNRUNNABLE_CODE =
  'This server runs bot packages deployed with `parley deploy`; it cannot run this code (an @botpress/sdk bundle built by `bp`, say) yet, so it was not deployed';

/**
 * Which runtime runs this code: a compiled Parley bot package (what `parley deploy` uploads) runs in
 * the engine; no code (null or empty) is no runtime. Anything else is refused rather than kept unrun (a
 * deploy that is accepted and never runs would be the worst answer); so is a document that claims to
 * be a Parley package but is malformed, so the engine never loads a broken one.
 */
export function runtimeOf(code: string | null): BotRuntime | null {
  if (code === null || code.trim() === '') return null;
  if (!code.startsWith('{')) throw invalidPayload(UNRUNNABLE_CODE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(code);
  } catch {
    throw invalidPayload(UNRUNNABLE_CODE);
  }
  if (typeof parsed !== 'object' || parsed === null || !('parley' in parsed))
    throw invalidPayload(UNRUNNABLE_CODE);
  if (!validate(parsed)) {
    const first = validate.errors?.[0];
    throw invalidPayload(
      `code is not a valid Parley bot package: ${first?.instancePath ?? ''} ${first?.message ?? ''}`.trim(),
    );
  }
  return 'parley';
}

/** The package of code `runtimeOf` accepted. */
export function parsePackage(code: string): CompiledPackage {
  return JSON.parse(code) as CompiledPackage;
}
