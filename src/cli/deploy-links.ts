import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError } from './errors.ts';

/**
 * The bots a package folder was deployed to, one per server and workspace, so that `parley deploy` of the
 * same folder deploys a new version of the same bot (as `bp` keeps its bot id in its project folder)
 * instead of creating another every time. The file lives in the folder's `.parley/`, which ignores itself
 * in git: it names one deployment's ids, not something to share.
 */
export const LINKS_FOLDER = '.parley';
export const LINKS_FILE = path.join(LINKS_FOLDER, 'links.json');

export interface DeployLink {
  url: string;
  workspaceId: string;
  botId: string;
  /**
   * The folder (absolute) the link was written in: a copy of the folder (a new bot made from an existing
   * one) carries the file along, and must not deploy over the original's bot.
   */
  folder: string;
}

interface LinksDocument {
  links: DeployLink[];
}

/** A server is the same whatever trailing slash its URL was typed with. */
function sameTarget(link: DeployLink, url: string, workspaceId: string): boolean {
  return link.url.replace(/\/+$/, '') === url.replace(/\/+$/, '') && link.workspaceId === workspaceId;
}

function isLink(value: unknown): value is DeployLink {
  if (typeof value !== 'object' || value === null) return false;
  const fields: Record<string, unknown> = { ...value };
  return ['url', 'workspaceId', 'botId', 'folder'].every((name) => typeof fields[name] === 'string');
}

async function readLinks(folder: string): Promise<DeployLink[]> {
  const file = path.join(folder, LINKS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return [];
    throw err;
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not JSON: delete it, or deploy with --bot-id or --new`);
  }
  const links =
    typeof document === 'object' && document !== null && 'links' in document ? document.links : [];
  return Array.isArray(links) ? links.filter(isLink) : [];
}

/**
 * The bot this folder was last deployed to on that server and workspace, if any; or, when the link was
 * written in another folder (this one is a copy, or was moved), that folder and its bot, which this
 * folder does not deploy to unless told.
 */
export async function linkedBot(
  folder: string,
  url: string,
  workspaceId: string,
): Promise<{ botId: string } | { elsewhere: DeployLink } | undefined> {
  const link = (await readLinks(folder)).find((l) => sameTarget(l, url, workspaceId));
  if (link === undefined) return undefined;
  return link.folder === path.resolve(folder) ? { botId: link.botId } : { elsewhere: link };
}

/** Records that the folder deploys to `botId` there (replacing the link it had to that server and workspace). */
export async function linkBot(folder: string, link: DeployLink): Promise<void> {
  // A copy's links to other folders' bots go: the file names this folder's own from now on.
  const others = (await readLinks(folder)).filter(
    (l) => !sameTarget(l, link.url, link.workspaceId) && l.folder === link.folder,
  );
  const document: LinksDocument = { links: [...others, link] };
  const dir = path.join(folder, LINKS_FOLDER);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, '.gitignore'), "# Written by parley deploy: this deployment's ids.\n*\n");
  // Written whole and renamed, so that two deploys of one folder at once never leave half a file.
  const temporary = path.join(dir, `links.${process.pid}.tmp`);
  await writeFile(temporary, `${JSON.stringify(document, null, 2)}\n`);
  await rename(temporary, path.join(folder, LINKS_FILE));
}
