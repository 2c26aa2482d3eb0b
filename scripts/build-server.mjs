#!/usr/bin/env node
// Compiles the server (src/) to JavaScript in dist/server, which `npm start` and the installed `parley`
// command run, and copies the files that are read as they are (the sandbox's isolate bootstrap, the
// runner of SDK bot processes).
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

function plainJs(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return plainJs(full);
    return /\.c?js$/.test(entry.name) ? [full] : [];
  });
}
const src = path.join(root, 'src');
for (const file of plainJs(src)) cpSync(file, path.join(root, 'dist', 'server', path.relative(src, file)));
