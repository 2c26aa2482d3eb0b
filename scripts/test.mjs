#!/usr/bin/env node
// Runs every test file under test/ with Node's test runner (Node 20 does not expand globs itself).
// Extra arguments are passed on: `npm run test:only -- test/admin-bots.test.ts` runs one file.
// `--e2e` runs the slow end-to-end suites of test/e2e/ (a real browser, load) instead of the others.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Folders of test/ that hold no suite of `npm test`: shared helpers, and the end-to-end suites. */
const NOT_SUITES = new Set(['helpers', 'fixtures', 'e2e']);

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return NOT_SUITES.has(entry.name) ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const e2e = process.argv.includes('--e2e');
const args = process.argv.slice(2).filter((a) => a !== '--e2e');
const root = e2e ? 'test/e2e' : 'test';
const files = args.some((a) => a.endsWith('.ts')) ? [] : testFiles(root).sort();
if (files.length === 0 && !args.some((a) => a.endsWith('.ts'))) {
  // Without files, node --test would look for tests all over the working directory.
  console.log(`no test files under ${root}/`);
  process.exit(0);
}
// The suites run the `parley` command as users do, from the compiled build: bring it up to date first
// (incremental, so about two seconds when nothing changed).
for (const build of ['scripts/build-server.mjs', 'scripts/build-console.mjs']) {
  const built = spawnSync(process.execPath, [build], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const result = spawnSync(
  process.execPath,
  [
    '--no-node-snapshot',
    '--import',
    'tsx',
    '--test',
    // Node 20 holds each file to this limit too, as a test of its own: a file's suites together must end
    // within it on a busy machine (split a file that comes near it).
    '--test-timeout=300000',
    // The spec reporter ends with the failing tests, their file:line and their errors, so that the tail
    // of a long run (all a CI log may keep) says what failed.
    '--test-reporter=spec',
    '--test-concurrency=2',
    ...args,
    ...files,
  ],
  { stdio: 'inherit', env: process.env },
);
process.exit(result.status ?? 1);
