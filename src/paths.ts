import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/**
 * Whether this process runs the TypeScript sources (development and tests, through tsx) or the
 * JavaScript the build compiled (`npm start`, the installed `parley` command).
 */
export const FROM_SOURCE = here.endsWith('.ts');

/** Parley's own folder: the clone, or where npm installed the package (the nearest with its package.json). */
export const PACKAGE_ROOT = findRoot(path.dirname(here));

function findRoot(dir: string): string {
  for (let at = dir; ; at = path.dirname(at)) {
    const manifest = path.join(at, 'package.json');
    if (existsSync(manifest) && readName(manifest) === 'parley') return at;
    if (path.dirname(at) === at) throw new Error(`no package.json of parley above ${dir}`);
  }
}

function readName(manifest: string): unknown {
  const parsed: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
  return typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'name') : undefined;
}
