import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './paths.ts';

function readVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const version: unknown =
    typeof manifest === 'object' && manifest !== null ? Reflect.get(manifest, 'version') : undefined;
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}

/** The version in package.json, read once. */
export const VERSION: string = readVersion();
