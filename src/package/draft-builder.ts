// The bot package format as the domain's drafts use it (domain/bots/bot-drafts.ts's PackageBuilder): a
// draft's files checked and compiled by the loader `parley validate` and `parley deploy` run, and the
// files of a deployed package made back from what it keeps.
import type { PackageBuilder } from '../domain/bots/bot-drafts.ts';
import type { DraftFiles } from '../domain/bots/schemas.ts';
import { botDefinition } from './bot-definition.ts';
import { codeFilePath } from './checks.ts';
import { typedCard } from './cards.ts';
import { unitIds } from './format.ts';
import type { CompiledPackage, HookType } from './format.ts';
import { compilePackage, PackageError } from './load.ts';
import { draftFiles } from './package-files.ts';
import { parsePackage } from './compiled.ts';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function compiled(
  files: DraftFiles,
): Promise<{ pkg: CompiledPackage } | { problems: PackageError['problems'] }> {
  try {
    return { pkg: await compilePackage(draftFiles(files)) };
  } catch (err) {
    if (err instanceof PackageError) return { problems: err.problems };
    throw err;
  }
}

/**
 * The package folder of a deployed package. What it keeps of code is compiled: each code file holds the
 * JavaScript esbuild made of it (types gone, the same behaviour), under the name the package gave it, so
 * that the workflows' references still find it. JSON files are the package's own, `$schema` aside.
 */
export function sourcesOf(code: string): DraftFiles {
  const pkg = parsePackage(code);
  const files: DraftFiles = { 'bot.json': json(pkg.manifest) };
  const unit = (id: string) => pkg.units[id] ?? '';
  for (const [name, action] of Object.entries(pkg.actions)) {
    files[`actions/${name}.json`] = json(action);
    files[`actions/${name}.js`] = unit(unitIds.action(name));
  }
  for (const [type, ids] of Object.entries(pkg.hooks) as [HookType, string[]][]) {
    for (const id of ids) files[`hooks/${type}/${id.slice(`hook:${type}:`.length)}`] = unit(id);
  }
  for (const [name, workflow] of Object.entries(pkg.workflows)) {
    files[`workflows/${name}.json`] = json(workflow);
    for (const node of workflow.nodes) {
      for (const [i, card] of (node.cards ?? []).map(typedCard).entries()) {
        const file = card.type === 'code' && card.file !== undefined ? codeFilePath(card.file) : undefined;
        if (file) files[file] = unit(unitIds.card(name, node.id, i));
      }
    }
  }
  for (const [name, kb] of Object.entries(pkg.knowledge ?? {})) files[`knowledge/${name}.json`] = json(kb);
  for (const [file, table] of Object.entries(pkg.tables ?? {})) files[`tables/${file}.json`] = json(table);
  return files;
}

export const draftBuilder: PackageBuilder = {
  async check(files) {
    const result = await compiled(files);
    return 'problems' in result ? result.problems : [];
  },
  async build(files, current) {
    const result = await compiled(files);
    if ('problems' in result) return result;
    return { update: botDefinition(result.pkg, current).update, tables: result.pkg.tables };
  },
  sourcesOf,
  blank: (name) => ({
    'bot.json': json({ formatVersion: 1, name }),
    'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start' }] }),
  }),
};
