import { Type } from 'typebox';
import { compiledOnFirstUse } from '../domain/shared/json-schema.ts';
import {
  ActionDefinitionSchema,
  BotManifestSchema,
  FORMAT_VERSION,
  HOOK_TYPES,
  WorkflowSchema,
} from './format.ts';
import type { CompiledPackage } from './format.ts';

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

const validate = compiledOnFirstUse(CompiledPackageSchema);

/**
 * What is wrong with a document that says it is a compiled package (where, then what), or undefined
 * when the engine can load it: the check a deploy of Parley code passes (the domain's `PackageCheck`).
 */
export function checkCompiledPackage(document: object): string | undefined {
  if (validate(document)) return undefined;
  const first = validate.errors?.[0];
  return `${first?.instancePath ?? ''} ${first?.message ?? ''}`;
}

/** The package of code a deploy accepted (`checkCompiledPackage`). */
export function parsePackage(code: string): CompiledPackage {
  return JSON.parse(code) as CompiledPackage;
}
