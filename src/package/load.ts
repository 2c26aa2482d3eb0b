import path from 'node:path';
import { typedCard } from './cards.ts';
import { checkReferences, codeFilePath } from './checks.ts';
import type { PackageParts } from './checks.ts';
import { compileBody, expressionProblem } from './compile.ts';
import type { CodeIssue, Loader } from './compile.ts';
import { FORMAT_VERSION, HOOK_TYPES, KNOWLEDGE_FILE_EXTENSIONS, unitIds } from './format.ts';
import type {
  ActionDefinition,
  BotManifest,
  CompiledPackage,
  HookType,
  KnowledgeBaseDefinition,
  TableDefinition,
  Workflow,
} from './format.ts';
import { parseJson } from './json-document.ts';
import type { BrokenParts, JsonDocument, LoadedJson } from './json-document.ts';
import { PackageError, pointer } from './problems.ts';
import type { Problem } from './problems.ts';
import type { PackageSchemaKind } from './schemas.ts';
import { checkTables } from './tables.ts';
import { conditionBody, templateBody, templateExpressions } from './templates.ts';
import { validateAgainst } from './validate.ts';
import { folderFiles } from './package-files.ts';
import type { PackageEntry, PackageFiles } from './package-files.ts';

export { PackageError } from './problems.ts';
export type { Problem } from './problems.ts';

/** The `Name` of format.ts: action and workflow names come from file names, which no schema sees. */
const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const CODE_EXTENSIONS: Record<string, Loader> = { '.ts': 'ts', '.js': 'js' };
/** Card fields that may hold `{{ }}` templates, by card type. */
const TEMPLATE_FIELDS: Record<string, string[]> = {
  say: ['message'],
  capture: ['prompt', 'retryMessage'],
  set: ['value'],
  action: ['input'],
  knowledge: ['question', 'notFound'],
  tableFind: ['filter'],
  tableInsert: ['row'],
  tableUpdate: ['rowId', 'values'],
  tableUpsert: ['row'],
  tableDelete: ['filter'],
  aiGenerate: ['instructions', 'context'],
  aiTask: ['instructions', 'input'],
  aiTransition: ['instructions', 'input'],
  knowledgeAnswer: ['question', 'instructions', 'noAnswer'],
  autonomous: ['instructions', 'limitMessage'],
  handoff: ['reason', 'team', 'message'],
};

const at = (file: string, message: string, line = 1, column = 1): Problem => ({
  file,
  line,
  column,
  field: '',
  message,
});

/** A piece of code to compile into a unit, and where its problems are reported. */
interface CodeSource {
  code: string;
  loader: Loader;
  /** A code file (problems at its lines), or a JSON field holding inline code. */
  origin: { file: string } | { doc: JsonDocument; field: string };
}

/**
 * Reads a bot package folder, validates it and compiles its code. Every problem found is reported at
 * once in a PackageError; nothing is returned unless the whole package is sound.
 */
export async function loadPackage(dir: string): Promise<CompiledPackage> {
  const files = await folderFiles(dir);
  if (!files) throw new PackageError([at('.', `${dir} is not a folder`)]);
  return compilePackage(files);
}

/**
 * Validates and compiles the package `files` hold (a folder, or a console's draft), with the problems
 * and messages of `parley validate`: every problem at once in a PackageError.
 */
export async function compilePackage(files: PackageFiles): Promise<CompiledPackage> {
  const reader = new PackageReader(files);
  const manifest = await reader.json<BotManifest>('bot.json', 'bot');
  const actionCode = new Map<string, { file: string; loader: Loader }>();
  const actions = await reader.actions(actionCode);
  const hooks = await reader.hooks();
  const workflows = await reader.workflows();
  const codeFiles = await reader.codeFiles();
  const knowledge = await reader.knowledge();
  const tableFiles = await reader.tables();
  const problems = reader.problems;
  const tables = checkTables(tableFiles, problems);
  problems.push(
    ...checkReferences({
      manifest,
      actions,
      workflows,
      codeFiles,
      knowledge: new Set(knowledge.keys()),
      tables,
    }),
  );

  const compiler = new UnitCompiler(problems);
  for (const [name, { file, loader }] of actionCode) {
    if (actions.has(name))
      compiler.code(unitIds.action(name), { code: await reader.text(file), loader, origin: { file } });
  }
  const hookUnits: Partial<Record<HookType, string[]>> = {};
  for (const [type, files] of hooks) {
    const ids: string[] = [];
    for (const { name, file, loader } of files) {
      ids.push(unitIds.hook(type, name));
      compiler.code(unitIds.hook(type, name), { code: await reader.text(file), loader, origin: { file } });
    }
    hookUnits[type] = ids;
  }
  for (const [name, workflow] of workflows) {
    if (workflow) await compileWorkflow(name, workflow, compiler, reader, codeFiles);
  }
  const units = await compiler.done();

  if (problems.length || !manifest) throw new PackageError(problems);
  return {
    parley: FORMAT_VERSION,
    manifest: withoutSchemaKey(manifest.value),
    actions: Object.fromEntries(
      [...actions].map(([name, a]) => [name, withoutSchemaKey((a as LoadedJson<ActionDefinition>).value)]),
    ),
    hooks: hookUnits,
    workflows: Object.fromEntries(
      [...workflows].map(([name, w]) => [name, withoutSchemaKey((w as LoadedJson<Workflow>).value)]),
    ),
    units,
    ...(knowledge.size > 0 && {
      knowledge: Object.fromEntries(
        [...knowledge].flatMap(([name, kb]) => (kb ? [[name, withoutSchemaKey(kb.value)]] : [])),
      ),
    }),
    ...(tableFiles.size > 0 && {
      tables: Object.fromEntries(
        [...tableFiles].flatMap(([file, table]) =>
          table ? [[file, { ...withoutSchemaKey(table.value), name: table.value.name ?? file }]] : [],
        ),
      ),
    }),
  };
}

/**
 * The nodes and cards of a workflow that its schema problems are in, when every problem is inside one
 * (and `nodes` is a list): the others can still be checked. Undefined when a problem is elsewhere.
 */
function partsHolding(issues: { field: string }[], value: unknown): BrokenParts | undefined {
  const nodes =
    typeof value === 'object' && value !== null ? (value as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return undefined;
  const broken: BrokenParts = { nodes: new Set(), cards: new Set() };
  for (const { field } of issues) {
    const place = /^\/nodes\/(\d+)(?:\/cards\/(\d+)(?:\/|$))?/.exec(field);
    if (!place) return undefined;
    const [, node, card] = place;
    if (card !== undefined && field !== `/nodes/${node}/cards`) broken.cards.add(`${node}/${card}`);
    else broken.nodes.add(Number(node));
  }
  return broken;
}

/** `$schema` only tells editors where the schema is: not part of the bot. */
function withoutSchemaKey<T extends { $schema?: string }>(value: T): T {
  const { $schema: _, ...rest } = value;
  return rest as T;
}

async function compileWorkflow(
  name: string,
  { doc, value, broken }: LoadedJson<Workflow>,
  compiler: UnitCompiler,
  reader: PackageReader,
  codeFiles: Set<string>,
): Promise<void> {
  for (const [n, node] of value.nodes.entries()) {
    if (broken?.nodes.has(n)) continue;
    const field = (...rest: (string | number)[]) => pointer('nodes', n, ...rest);
    if (Array.isArray(node.next)) {
      node.next.forEach((t, j) => {
        if (t.when !== undefined)
          compiler.condition(unitIds.when(name, node.id, j), t.when, doc, field('next', j, 'when'));
      });
    }
    for (const [i, card] of (node.cards ?? []).map(typedCard).entries()) {
      if (broken?.cards.has(`${n}/${i}`)) continue;
      if (card.type === 'code') {
        const id = unitIds.card(name, node.id, i);
        const file = card.file === undefined ? undefined : codeFilePath(card.file);
        if (card.code !== undefined && card.file === undefined) {
          compiler.code(id, {
            code: card.code,
            loader: 'ts',
            origin: { doc, field: field('cards', i, 'code') },
          });
        } else if (file && codeFiles.has(file) && card.code === undefined) {
          const loader = CODE_EXTENSIONS[path.extname(file)] as Loader;
          compiler.code(id, { code: await reader.text(file), loader, origin: { file } });
        }
      }
      if (card.type === 'expression')
        compiler.condition(
          unitIds.condition(name, node.id, i),
          card.condition,
          doc,
          field('cards', i, 'condition'),
        );
      if (card.type === 'capture' && card.validation !== undefined) {
        compiler.condition(
          unitIds.condition(name, node.id, i),
          card.validation,
          doc,
          field('cards', i, 'validation'),
        );
      }
      for (const key of TEMPLATE_FIELDS[card.type] ?? []) {
        const fieldValue = (card as Record<string, unknown>)[key];
        if (templateExpressions(fieldValue).length) {
          compiler.template(unitIds.template(name, node.id, i, key), fieldValue, doc, field('cards', i, key));
        }
      }
    }
  }
}

/** Starts every compilation at once (esbuild works in parallel) and gathers the units and problems. */
class UnitCompiler {
  private readonly pending = new Map<string, Promise<string | undefined>>();

  constructor(private readonly problems: Problem[]) {}

  code(id: string, source: CodeSource): void {
    this.start(id, this.compileCode(source));
  }

  condition(id: string, expression: string, doc: JsonDocument, field: string): void {
    this.start(
      id,
      this.compileExpressions(conditionBody(expression), [{ field: '', expression }], doc, field),
    );
  }

  template(id: string, value: unknown, doc: JsonDocument, field: string): void {
    this.start(id, this.compileExpressions(templateBody(value), templateExpressions(value), doc, field));
  }

  private start(id: string, compiling: Promise<string | undefined>): void {
    // done() awaits it and rethrows; until then a failure (an esbuild crash) must not count as unhandled.
    compiling.catch(() => {});
    this.pending.set(id, compiling);
  }

  async done(): Promise<Record<string, string>> {
    const units: Record<string, string> = {};
    for (const [id, body] of this.pending) {
      const compiled = await body;
      if (compiled !== undefined) units[id] = compiled;
    }
    return units;
  }

  private async compileCode({ code, loader, origin }: CodeSource): Promise<string | undefined> {
    const sourcefile = 'file' in origin ? origin.file : `${origin.doc.file}#${origin.field}`;
    const result = await compileBody(code, loader, sourcefile);
    if (result.ok) return result.body;
    const place = (issue: CodeIssue): Problem =>
      'file' in origin
        ? at(origin.file, issue.message, issue.line, issue.column)
        : origin.doc.problem(
            origin.field,
            `line ${issue.line}, column ${issue.column} of the code: ${issue.message}`,
          );
    this.problems.push(...result.issues.map(place));
    return undefined;
  }

  /** Each expression is checked on its own first, so that a problem names the string that holds it. */
  private async compileExpressions(
    body: string,
    expressions: { field: string; expression: string }[],
    doc: JsonDocument,
    field: string,
  ): Promise<string | undefined> {
    const checked = await Promise.all(
      expressions.map(async (e) => ({ ...e, problem: await expressionProblem(e.expression) })),
    );
    const bad = checked.filter((e) => e.problem);
    if (bad.length) {
      this.problems.push(...bad.map((e) => doc.problem(field + e.field, e.problem as string)));
      return undefined;
    }
    const result = await compileBody(body, 'js', `${doc.file}#${field}`);
    if (result.ok) return result.body;
    this.problems.push(...result.issues.map((issue) => doc.problem(field, issue.message)));
    return undefined;
  }
}

/** Reads the package's files, collecting the problems of layout, syntax and schema on the way. */
class PackageReader {
  readonly problems: Problem[] = [];

  constructor(private readonly files: PackageFiles) {}

  /** A file the package's listing found. */
  async text(file: string): Promise<string> {
    const text = await this.files.read(file);
    if (text === undefined) throw new Error(`${file} was listed and is gone`);
    return text;
  }

  async json<T>(file: string, kind: PackageSchemaKind): Promise<LoadedJson<T> | undefined> {
    let text: string | undefined;
    try {
      text = await this.files.read(file);
    } catch (err) {
      this.problems.push(at(file, `cannot be read (${(err as NodeJS.ErrnoException).code})`));
      return undefined;
    }
    if (text === undefined) {
      this.problems.push(at(file, 'missing'));
      return undefined;
    }
    const parsed = parseJson(file, text);
    if (!parsed.ok) {
      this.problems.push(...parsed.problems);
      return undefined;
    }
    const issues = validateAgainst(kind, parsed.value);
    if (issues.length) {
      this.problems.push(...issues.map((i) => parsed.doc.problem(i.field, i.message, { key: i.key })));
      const broken = kind === 'workflow' ? partsHolding(issues, parsed.value) : undefined;
      return broken && { doc: parsed.doc, value: parsed.value as T, broken };
    }
    return { doc: parsed.doc, value: parsed.value as T };
  }

  /** The entries of a folder of the package (none when it is absent), without hidden files. */
  private async entries(folder: string): Promise<PackageEntry[]> {
    const entries = await this.files.list(folder);
    if (entries === 'file') {
      this.problems.push(at(folder, 'must be a folder'));
      return [];
    }
    return entries
      .filter((e) => !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** actions/<name>.json with actions/<name>.ts or .js: one without the other is a problem. */
  async actions(code: Map<string, { file: string; loader: Loader }>): Promise<PackageParts['actions']> {
    const definitions = new Map<string, string>();
    for (const entry of await this.entries('actions')) {
      const file = `actions/${entry.name}`;
      const ext = path.extname(entry.name);
      const name = path.basename(entry.name, ext);
      const loader = CODE_EXTENSIONS[ext];
      if (entry.kind !== 'file' || (ext !== '.json' && !loader)) {
        this.problems.push(
          at(file, 'unexpected here: actions/ holds <name>.json and <name>.ts or <name>.js'),
        );
      } else if (!NAME.test(name)) {
        this.problems.push(at(file, `"${name}" is not a valid action name: it must match ${NAME.source}`));
      } else if (ext === '.json') {
        definitions.set(name, file);
      } else if (code.has(name)) {
        this.problems.push(
          at(file, `action ${name} has two code files: keep one of ${code.get(name)?.file} and ${file}`),
        );
      } else {
        code.set(name, { file, loader: loader as Loader });
      }
    }
    for (const [name, { file }] of code) {
      if (!definitions.has(name))
        this.problems.push(at(file, `no actions/${name}.json describes this action`));
    }
    const actions: PackageParts['actions'] = new Map();
    for (const [name, file] of definitions) {
      if (!code.has(name))
        this.problems.push(at(file, `missing the action's code: actions/${name}.ts or actions/${name}.js`));
      actions.set(name, await this.json<ActionDefinition>(file, 'action'));
    }
    return actions;
  }

  /** hooks/<hookType>/<file>.ts|.js, in file-name order within each hook type. */
  async hooks(): Promise<Map<HookType, { name: string; file: string; loader: Loader }[]>> {
    const hooks = new Map<HookType, { name: string; file: string; loader: Loader }[]>();
    for (const folder of await this.entries('hooks')) {
      const type = folder.name as HookType;
      if (folder.kind !== 'folder' || !HOOK_TYPES.includes(type)) {
        this.problems.push(
          at(`hooks/${folder.name}`, `hooks/ holds one folder per hook type: ${HOOK_TYPES.join(', ')}`),
        );
        continue;
      }
      const files = [];
      for (const entry of await this.entries(`hooks/${type}`)) {
        const file = `hooks/${type}/${entry.name}`;
        const loader = CODE_EXTENSIONS[path.extname(entry.name)];
        if (entry.kind !== 'file' || !loader) this.problems.push(at(file, 'a hook is a .ts or .js file'));
        else files.push({ name: entry.name, file, loader });
      }
      if (files.length) hooks.set(type, files);
    }
    return hooks;
  }

  async workflows(): Promise<PackageParts['workflows']> {
    return this.jsonFiles<Workflow>('workflows', 'workflow', 'workflow');
  }

  /** The <name>.json files of a folder, by name, each checked against the schema of its kind. */
  private async jsonFiles<T>(
    folder: string,
    kind: PackageSchemaKind,
    what: string,
  ): Promise<Map<string, LoadedJson<T> | undefined>> {
    const found = new Map<string, LoadedJson<T> | undefined>();
    for (const entry of await this.entries(folder)) {
      const file = `${folder}/${entry.name}`;
      const name = path.basename(entry.name, '.json');
      if (entry.kind !== 'file' || path.extname(entry.name) !== '.json') {
        this.problems.push(at(file, `unexpected here: ${folder}/ holds <name>.json files`));
      } else if (!NAME.test(name)) {
        this.problems.push(at(file, `"${name}" is not a valid ${what} name: it must match ${NAME.source}`));
      } else {
        found.set(name, await this.json<T>(file, kind));
      }
    }
    return found;
  }

  /**
   * knowledge/<name>.json: a knowledge base and the documents it holds, which must be files of the
   * package (no path out of it) in a format that is indexed.
   */
  async knowledge(): Promise<Map<string, LoadedJson<KnowledgeBaseDefinition> | undefined>> {
    const bases = new Map<string, LoadedJson<KnowledgeBaseDefinition> | undefined>();
    for (const entry of await this.entries('knowledge')) {
      const file = `knowledge/${entry.name}`;
      const name = path.basename(entry.name, '.json');
      if (entry.kind !== 'file' || path.extname(entry.name) !== '.json') continue;
      if (!NAME.test(name)) {
        this.problems.push(
          at(file, `"${name}" is not a valid knowledge base name: it must match ${NAME.source}`),
        );
        continue;
      }
      const loaded = await this.json<KnowledgeBaseDefinition>(file, 'knowledge');
      bases.set(name, loaded);
      for (const [i, document] of (loaded?.value.files ?? []).entries()) {
        const problem = await this.documentProblem(document);
        if (problem && loaded) this.problems.push(loaded.doc.problem(pointer('files', i), problem));
      }
    }
    return bases;
  }

  /** tables/<name>.json: a table of the Tables API that parley deploy creates or migrates. */
  tables(): Promise<Map<string, LoadedJson<TableDefinition> | undefined>> {
    return this.jsonFiles<TableDefinition>('tables', 'table', 'table file');
  }

  private async documentProblem(document: string): Promise<string | undefined> {
    const segments = document.split('/');
    if (
      path.isAbsolute(document) ||
      segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\'))
    ) {
      return 'must be a path inside the package folder, like docs/faq.md';
    }
    if (!(KNOWLEDGE_FILE_EXTENSIONS as readonly string[]).includes(path.extname(document).toLowerCase())) {
      return `must be a document of a format that is indexed: ${KNOWLEDGE_FILE_EXTENSIONS.join(', ')}`;
    }
    return (await this.files.hasDocument(document)) ? undefined : `no file ${document}`;
  }

  /** Every file under code/ (any depth): code cards name them. */
  async codeFiles(folder = 'code'): Promise<Set<string>> {
    const files = new Set<string>();
    for (const entry of await this.entries(folder)) {
      const file = `${folder}/${entry.name}`;
      if (entry.kind === 'folder') for (const f of await this.codeFiles(file)) files.add(f);
      else if (entry.kind === 'file') files.add(file);
    }
    return files;
  }
}
