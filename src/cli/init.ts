import { cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { applyEdits, modify } from 'jsonc-parser';
import { CliError } from './errors.ts';
import { LINKS_FOLDER } from './deploy-links.ts';
import { printHelp } from './help.ts';
import { userPath } from './paths.ts';
import { PACKAGE_ROOT } from '../paths.ts';

/** The templates are the example bots that come with Parley. */
const EXAMPLES = path.join(PACKAGE_ROOT, 'examples');
const SCHEMAS = path.join(PACKAGE_ROOT, 'schemas');
export const TEMPLATES = {
  echo: 'echo-bot',
  menu: 'menu-bot',
  faq: 'faq-bot',
  'knowledge-agent': 'knowledge-agent',
} as const;
type Template = keyof typeof TEMPLATES;

const USAGE = `usage: parley init <dir> [--template ${Object.keys(TEMPLATES).join('|')}] [--name <bot name>]`;
const HELP = `${USAGE}

Starts a bot package in a new folder (or an empty one), from a template that deploys and answers as it
is, with a README that says what it does and how to try it.
  --template   echo (default): replies "You said: …" to a text, and a sample of each message type to its name.
               menu: a menu of choices, a sub-workflow with a FAQ, variables of every scope.
               faq: answers frequent questions from a list in code, greets when a webchat opens.
               knowledge-agent: a language model answers from help pages, looks orders up in a table and
               hands over to a person (needs a model: see docs/llm.md).
  --name       The bot's name (default: the folder's name).
`;

const isTemplate = (name: string): name is Template => Object.hasOwn(TEMPLATES, name);

/** A bot name from a folder name: what bot.json accepts (letters, digits, `-`, `_`, at most 100). */
function nameOf(folder: string): string {
  const name = path
    .basename(folder)
    .replace(/[^a-zA-Z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name.slice(0, 100) || 'my-bot';
}

async function jsonFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** What each part of a package is, for the README's table. */
const PARTS: Record<string, string> = {
  'bot.json': 'the manifest: name, description, configuration and variables',
  workflows: 'the workflows: `main.json` is where a conversation starts',
  code: 'the code of its code cards',
  hooks: 'code run at a point of every turn',
  actions: 'its actions: a JSON description and the code of each',
  knowledge: 'its knowledge bases: the documents each holds, uploaded and indexed by deploy',
  docs: 'the documents of its knowledge base',
  kb: 'the documents of its knowledge base',
  tables: 'its tables: the columns of each, created by deploy',
  seed: 'rows for its table: `npx parley tables import <table> <file> --bot-id <bot id>`',
};

function readme(name: string, template: Template, description: string, dir: string, parts: string[]): string {
  const rows = parts
    .filter((part) => PARTS[part])
    .map((part) => `| \`${part}${part.includes('.') ? '' : '/'}\` | ${PARTS[part]} |`);
  return `# ${name}

${description}

Made with \`parley init ${dir} --template ${template}\`. The folder is the bot: keep it in Git.

| path | what it is |
| --- | --- |
${rows.join('\n')}

## Try it

With a Parley server running (\`npm start\` in Parley's folder prints the owner token and the workspace id
at its first start), where you ran \`parley init\` (\`npx parley\` in Parley's folder, \`parley\` once
installed):

\`\`\`sh
export PARLEY_URL=http://127.0.0.1:3000 PARLEY_TOKEN=bp_pat_... PARLEY_WORKSPACE_ID=wkspace_...
npx parley validate ${dir}          # every problem, with its file, line and field
npx parley deploy ${dir}            # prints the bot's id, its chat URL and its webchat share link
npx parley chat --bot <bot id>      # talk to it in the terminal (the id deploy printed)
\`\`\`

Deploy again after a change with \`npx parley deploy ${dir}\`: the folder remembers its bot (in
\`.parley/links.json\`, which git ignores), and conversations go on.
The share link opens a full-page chat with the bot; Parley's docs/chat.md shows how to put it on a website.
`;
}

/** `parley init <dir>`: a bot package from a template, ready to validate and deploy. */
export async function initCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        template: { type: 'string', short: 't' },
        name: { type: 'string' },
      },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return printHelp(HELP);
  const [dir, ...extra] = positionals;
  if (!dir || extra.length > 0) throw new CliError(USAGE);
  const template = values.template ?? 'echo';
  if (!isTemplate(template)) {
    throw new CliError(`--template must be one of ${Object.keys(TEMPLATES).join(', ')}, got "${template}"`);
  }
  const target = userPath(dir);
  const existing = await stat(target).catch(() => undefined);
  if (existing && (!existing.isDirectory() || (await readdir(target)).length > 0)) {
    throw new CliError(`${dir} already exists and is not an empty folder: choose a new one`);
  }
  const name = values.name ?? nameOf(target);
  if (!/^[a-zA-Z0-9_-]{1,100}$/.test(name)) {
    throw new CliError(`--name may hold letters, digits, "-" and "_" (at most 100), got "${name}"`);
  }

  const source = path.join(EXAMPLES, TEMPLATES[template]);
  await mkdir(target, { recursive: true });
  // Not the template's README (the package gets its own), nor the bots the example folder was deployed
  // to (its deploy links): the new package deploys to a bot of its own.
  await cp(source, target, {
    recursive: true,
    filter: (file) => !['README.md', LINKS_FOLDER].includes(path.relative(source, file)),
  });
  // `$schema` points at Parley's schemas from where the package now is, so editors keep checking it.
  // The files keep their layout: only those two values change.
  for (const file of await jsonFiles(target)) {
    let text = await readFile(file, 'utf8');
    const { $schema } = JSON.parse(text) as { $schema?: unknown };
    const change = (key: string, value: string) => {
      text = applyEdits(
        text,
        modify(text, [key], value, { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
      );
    };
    if (typeof $schema === 'string') {
      const schema = path.join(SCHEMAS, path.basename($schema));
      change('$schema', path.relative(path.dirname(file), schema).split(path.sep).join('/'));
    }
    if (path.relative(target, file) === 'bot.json') change('name', name);
    await writeFile(file, text);
  }
  const manifest = JSON.parse(await readFile(path.join(target, 'bot.json'), 'utf8')) as {
    description?: string;
  };
  const parts = (await readdir(target)).sort();
  await writeFile(
    path.join(target, 'README.md'),
    readme(name, template, manifest.description ?? '', dir, parts),
  );

  process.stdout.write(`Created ${dir}: the ${template} template, as bot ${name}.\n`);
  process.stdout.write(
    `Next: npx parley validate ${dir}, then npx parley deploy ${dir} (see ${dir}/README.md)\n`,
  );
  return 0;
}
