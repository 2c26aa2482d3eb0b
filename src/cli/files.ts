import path from 'node:path';
import { parseCommandLine } from '../config.ts';
import { DEFAULT_URL } from './api.ts';
import { CliError } from './errors.ts';
import { FilesApi } from './files-api.ts';
import { printHelp, wantsHelp } from './help.ts';
import { knowledgeTags } from './knowledge.ts';
import { userPath } from './paths.ts';

/** The flags and settings of every command that acts as one bot (`parley files`, `kb`, `tables`). */
export const CONNECTION = '[--bot-id B] [--url URL] [--token T]';
export const CONNECTION_SETTINGS = `Reads PARLEY_URL (default ${DEFAULT_URL}), PARLEY_TOKEN and PARLEY_BOT_ID.`;
const FILES_USAGE = `usage: parley files upload <path>... [--key K] [--index] [--tag k=v]... [--kb <knowledge base>] ${CONNECTION}
  parley files list [--tag k=v]... ${CONNECTION}
  parley files delete <id or key>... ${CONNECTION}
${CONNECTION_SETTINGS}`;
const KB_USAGE = `usage: parley kb list ${CONNECTION}
  parley kb search <knowledge base name or id> <question>... [--limit N] ${CONNECTION}
${CONNECTION_SETTINGS}`;

export const CONNECTION_FLAGS = {
  'bot-id': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
} as const;
const FLAGS = {
  ...CONNECTION_FLAGS,
  key: { type: 'string' },
  index: { type: 'boolean' },
  tag: { type: 'string', multiple: true },
  kb: { type: 'string' },
  limit: { type: 'string' },
} as const;

/** A bot command's arguments (`commandFlags`: CONNECTION_FLAGS and its own), and its bot's Files API. */
export function connect(
  argv: string[],
  usage: string,
  commandFlags: Parameters<typeof parseCommandLine>[2] = FLAGS,
) {
  const { flags, positionals } = parseCommandLine(argv, process.env, commandFlags);
  const setting = (flag: string, env: string) => {
    const value = flags[flag];
    return typeof value === 'string' && value !== '' ? value : process.env[env] || undefined;
  };
  const token = setting('token', 'PARLEY_TOKEN');
  const botId = setting('bot-id', 'PARLEY_BOT_ID');
  if (!token) throw new CliError(`a token is required: set PARLEY_TOKEN or pass --token\n${usage}`);
  if (!botId) throw new CliError(`a bot is required: set PARLEY_BOT_ID or pass --bot-id\n${usage}`);
  const url = setting('url', 'PARLEY_URL') ?? DEFAULT_URL;
  const tags = Object.fromEntries(
    ((flags.tag as string[] | undefined) ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new CliError(`--tag takes key=value, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  return { api: new FilesApi(url, token, botId), flags, positionals, tags };
}

const print = (line: string) => process.stdout.write(`${line}\n`);

/** `parley files upload|list|delete`: a bot's files through the Files API. */
export async function filesCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(FILES_USAGE);
  const [action, ...rest] = argv;
  if (action !== 'upload' && action !== 'list' && action !== 'delete') throw new CliError(FILES_USAGE);
  const { api, flags, positionals, tags } = connect(rest, FILES_USAGE);
  if (action === 'list') {
    for (const f of await api.list(tags)) {
      const tagText = Object.entries(f.tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      print(`${f.id}  ${f.key}  ${f.size ?? '-'} bytes  ${f.status}${tagText ? `  ${tagText}` : ''}`);
    }
    return 0;
  }
  if (positionals.length === 0) throw new CliError(FILES_USAGE);
  if (action === 'delete') {
    for (const idOrKey of positionals) {
      await api.delete(idOrKey);
      print(`Deleted ${idOrKey}`);
    }
    return 0;
  }
  if (typeof flags.key === 'string' && positionals.length > 1)
    throw new CliError('--key names one file: upload one path');
  // --kb: into a knowledge base (made if need be), indexed, with its convention tags.
  const kb =
    typeof flags.kb === 'string'
      ? ((await api.knowledgeBase(flags.kb)) ?? (await api.createKnowledgeBase(flags.kb)))
      : undefined;
  let failed = false;
  for (const local of positionals) {
    const key =
      typeof flags.key === 'string'
        ? flags.key
        : local
            .split(path.sep)
            .join('/')
            .replace(/^(\.\/)+/, '');
    const file = await api.upload(key, userPath(local), {
      index: kb !== undefined || flags.index === true,
      tags: kb ? { ...knowledgeTags(kb.id, path.basename(local)), ...tags } : tags,
    });
    const settled = await api.settled(file.id);
    print(
      `Uploaded ${local} as ${settled.key} (${settled.id}): ${settled.status}${settled.failedStatusReason ? ` (${settled.failedStatusReason})` : ''}`,
    );
    if (settled.status.endsWith('failed')) failed = true;
  }
  return failed ? 1 : 0;
}

/** `parley kb list|search`: a bot's knowledge bases, and a question to try on one. */
export async function kbCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(KB_USAGE);
  const [action, ...rest] = argv;
  if (action !== 'list' && action !== 'search') throw new CliError(KB_USAGE);
  const { api, flags, positionals } = connect(rest, KB_USAGE);
  if (action === 'list') {
    for (const kb of await api.knowledgeBases()) print(`${kb.id}  ${kb.name}`);
    return 0;
  }
  const [name, ...words] = positionals;
  if (!name || words.length === 0) throw new CliError(KB_USAGE);
  const limit = typeof flags.limit === 'string' ? Number(flags.limit) : 5;
  if (!Number.isInteger(limit) || limit < 1 || limit > 50)
    throw new CliError('--limit must be an integer from 1 to 50');
  const kb = await api.knowledgeBase(name);
  if (!kb) throw new CliError(`no knowledge base "${name}" in this bot`);
  const results = await api.search(words.join(' '), { kbId: kb.id }, limit);
  if (results.length === 0) print('No passage matches.');
  results.forEach((r, i) => {
    const where = `${r.file.key}${r.meta.pageNumber !== undefined ? `, page ${r.meta.pageNumber}` : ''}`;
    print(`${i + 1}. [${r.score.toFixed(3)}] ${where}`);
    print(`   ${r.content.replace(/\s*\n\s*/g, ' ')}`);
  });
  return 0;
}
