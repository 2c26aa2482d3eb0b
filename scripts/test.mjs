#!/usr/bin/env node
// Runs every test file under test/ with Node's test runner (Node 20 does not expand globs itself).
// Extra arguments are passed on: `npm run test:only -- test/admin-bots.test.ts` runs one file.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'helpers' ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts')) ? [] : testFiles('test').sort();
const result = spawnSync(
  process.execPath,
  [
    '--no-node-snapshot',
    '--import',
    'tsx',
    '--test',
    '--test-timeout=120000',
    '--test-concurrency=2',
    ...args,
    ...files,
  ],
  { stdio: 'inherit', env: process.env },
);
process.exit(result.status ?? 1);
