import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

// Where a package's files are read from: a folder (`parley validate`, `parley deploy`) or the files of a
// console's draft (a map of paths to texts). The loader sees one listing either way, so both report the
// same problems with the same messages.

export interface PackageEntry {
  name: string;
  kind: 'file' | 'folder' | 'other';
}

export interface PackageFiles {
  /** A file's text; undefined when there is none. */
  read(file: string): Promise<string | undefined>;
  /** A folder's entries ([] when it is absent), or 'file' when the path is a file. */
  list(folder: string): Promise<PackageEntry[] | 'file'>;
  /** Whether a knowledge base's document is there. */
  hasDocument(file: string): Promise<boolean>;
}

/** The package in folder `dir`; undefined when there is no such folder. */
export async function folderFiles(dir: string): Promise<PackageFiles | undefined> {
  const root = path.resolve(dir);
  // A path that does not exist is no folder either.
  if (!(await stat(root).catch(() => undefined))?.isDirectory()) return undefined;
  const at = (file: string) => path.join(root, file);
  return {
    read: (file) =>
      readFile(at(file), 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      }),
    list: async (folder) => {
      try {
        const entries = await readdir(at(folder), { withFileTypes: true });
        return entries.map((e) => ({
          name: e.name,
          kind: e.isFile() ? 'file' : e.isDirectory() ? 'folder' : 'other',
        }));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return [];
        if (code === 'ENOTDIR') return 'file';
        throw err;
      }
    },
    hasDocument: async (file) => (await stat(at(file)).catch(() => undefined))?.isFile() === true,
  };
}

/**
 * The package a draft's files make (paths relative to the package folder, `/`-separated). A draft keeps
 * no knowledge documents: those of its knowledge bases are the bot's, which `parley deploy` uploaded and
 * indexed, so they count as there.
 */
export function draftFiles(files: Readonly<Record<string, string>>): PackageFiles {
  const paths = Object.keys(files);
  return {
    read: (file) => Promise.resolve(Object.hasOwn(files, file) ? files[file] : undefined),
    list: (folder) => {
      if (Object.hasOwn(files, folder)) return Promise.resolve('file');
      const entries = new Map<string, PackageEntry['kind']>();
      for (const file of paths) {
        if (!file.startsWith(`${folder}/`)) continue;
        const [name = '', ...rest] = file.slice(folder.length + 1).split('/');
        entries.set(name, rest.length > 0 ? 'folder' : 'file');
      }
      return Promise.resolve([...entries].map(([name, kind]) => ({ name, kind })));
    },
    hasDocument: () => Promise.resolve(true),
  };
}
