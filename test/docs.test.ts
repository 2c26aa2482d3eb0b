// The documentation, tested so that it cannot rot: the generated parts are what `npm run docs` writes, and
// every shell and TypeScript snippet of the README, docs/ and the examples' READMEs runs against a server
// this test starts, as a reader would run it. How a snippet is marked (not run, a file to save, or read by
// another test) is in docs/development.md.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PAYLOAD_LIMITS } from '../src/api/limits.ts';
import { SETTINGS } from '../src/config.ts';
import { generatedDocs } from '../scripts/docs-pages.ts';
import { docBlocks, documents } from './helpers/docs.ts';
import type { DocBlock } from './helpers/docs.ts';
import { runParley } from './helpers/process.ts';
import type { ParleyProcess } from './helpers/process.ts';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const readme = await readFile('README.md', 'utf8');
const configuration = await readFile('docs/configuration.md', 'utf8');

test('the generated parts of docs/ are up to date (npm run docs writes them)', async () => {
  for (const [file, text] of Object.entries(await generatedDocs())) {
    assert.ok((await readFile(file, 'utf8')) === text, `${file} is out of date: run npm run docs`);
  }
});

test('docs/configuration.md lists every setting with its flag and default', () => {
  for (const setting of Object.values(SETTINGS)) {
    const row = configuration
      .split('\n')
      .find((line) => new RegExp(`^\\|\\s*\`${setting.env}\`\\s*\\|`).test(line));
    assert.ok(row, `docs/configuration.md has a row for ${setting.env}`);
    assert.ok(row.includes(`\`--${setting.flag}\``), `${setting.env} row names --${setting.flag}`);
    if ('default' in setting)
      assert.ok(row.includes(`\`${setting.default}\``), `${setting.env} row gives its default`);
  }
});

test('docs/configuration.md states the payload limits the server enforces', () => {
  const mb = (bytes: number) => `${bytes / (1024 * 1024)} MB`;
  const lines = configuration.split('\n');
  const line = lines.find((l) => l.startsWith('Payload limits')) ?? '';
  const next = lines[lines.indexOf(line) + 1] ?? '';
  const text = `${line} ${next}`;
  assert.ok(text.includes(`Admin ${mb(PAYLOAD_LIMITS.admin)}`));
  assert.ok(text.includes(`Runtime ${mb(PAYLOAD_LIMITS.runtime)}`));
  assert.ok(text.includes(`Tables ${mb(PAYLOAD_LIMITS.tables)}`));
  assert.ok(text.includes(`webhook ingress ${mb(PAYLOAD_LIMITS.webhook)}`));
});

test('the README gives the two commands', () => {
  assert.ok(readme.includes('npm ci && npm start'));
  assert.ok(readme.includes('npm test'));
});

// --- The snippets ---------------------------------------------------------------------------------------

const SHELL = new Set(['sh', 'bash', 'shell']);
const TYPESCRIPT = new Set(['ts', 'typescript']);
const JAVASCRIPT = new Set(['js', 'javascript', 'mjs']);
const runnable = (b: DocBlock) => SHELL.has(b.lang) || TYPESCRIPT.has(b.lang) || JAVASCRIPT.has(b.lang);

/** What a block's marker says of it. */
type Plan =
  | { kind: 'run' }
  | { kind: 'not run'; reason: string }
  | { kind: 'file'; path: string }
  | { kind: 'read by'; test: string }
  | { kind: 'not code' };

/** The test files (their sources), to find the one that reads a marked block. */
async function testSources(dir = 'test'): Promise<[string, string][]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e): Promise<[string, string][]> => {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) return e.name === 'fixtures' ? [] : testSources(file);
      return e.name.endsWith('.ts') ? [[file, await readFile(file, 'utf8')]] : [];
    }),
  );
  return nested.flat();
}

function planOf(block: DocBlock, sources: [string, string][]): Plan {
  const marker = block.marker;
  const notRun = marker && /^not run:\s*(.*)$/s.exec(marker);
  if (notRun) return { kind: 'not run', reason: notRun[1] ?? '' };
  const file = marker && /^file:\s*(\S+)$/.exec(marker);
  if (file) return { kind: 'file', path: file[1] ?? '' };
  if (marker) {
    // A name: the test that runs the block reads it by that name (docsBlock(doc, name)).
    const reader = sources.find(
      ([, text]) => text.includes(`'${marker}'`) && text.includes(`'${block.doc}'`),
    );
    return { kind: 'read by', test: reader?.[0] ?? '' };
  }
  return runnable(block) ? { kind: 'run' } : { kind: 'not code' };
}

/**
 * The reader's values in a snippet, replaced by the test server's: its address (the docs say
 * 127.0.0.1:3000) and, as the first start printed them, the owner token and workspace id.
 */
interface Reader {
  host: string;
  token: string;
  workspaceId: string;
}
const asReader = (text: string, r: Reader) =>
  text
    .replace(/\b(?:127\.0\.0\.1|localhost):3000\b/g, r.host)
    .replaceAll('bp_pat_...', r.token)
    .replaceAll('wkspace_...', r.workspaceId);

const slug = (doc: string) => doc.replace(/\.md$/, '').replace(/[^a-zA-Z0-9]+/g, '-');

/**
 * One bash script for the document: its shell blocks in order in one session (variables carry over, as
 * in a reader's terminal), its TypeScript blocks run with tsx at their place, its files saved. Strict
 * (`set -euo pipefail`) and every curl made to fail on an HTTP error, so a snippet that goes wrong
 * stops the session, naming the block and the command; npm refuses to install anything.
 */
async function scriptOf(
  doc: string,
  blocks: PlannedBlock[],
  folder: string,
  reader: Reader,
  envFile: string,
) {
  const lines = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body "$@"; }',
    // node_modules is the clone's (shared by the worktrees): a snippet that installs must be marked, and
    // one that is not fails here rather than install.
    `npm() { case "\${1:-}" in ci|i|install|add|uninstall|remove|rm|prune|update|link) echo "docs test: npm $1 refused (mark the block <!-- not run: … -->)" >&2; exit 1;; esac; command npm "$@"; }`,
    // What `npx parley` and `npx tsx` run, without npm's start-up (2.5 s of CPU a call, 46 calls): the
    // test below runs them through npx as written.
    `npx() { case "\${1:-}" in parley) shift; node '${path.resolve('bin/parley.js')}' "$@";; tsx) shift; node --import tsx "$@";; *) command npx "$@";; esac; }`,
    `trap 'echo "docs test: failed: $BASH_COMMAND" >&2' ERR`,
  ];
  for (const block of blocks) {
    const plan = block.plan;
    if (plan.kind !== 'run' && plan.kind !== 'file') continue;
    const text = asReader(block.text, reader);
    // Each block's start and time, on a line of its own (what a snippet printed last may not end its line).
    lines.push(`printf '\\n::: %s @%s\\n' '${doc}:${block.line}' "$EPOCHREALTIME" >&2`);
    if (plan.kind === 'file') {
      lines.push(
        `mkdir -p "$(dirname '${plan.path}')"`,
        `cat > '${plan.path}' <<'DOCS_FILE_END'`,
        text,
        'DOCS_FILE_END',
      );
    } else if (SHELL.has(block.lang)) {
      lines.push(text);
    } else {
      const file = path.join(
        folder,
        `${slug(doc)}-${block.line}.${TYPESCRIPT.has(block.lang) ? 'mts' : 'mjs'}`,
      );
      await writeFile(file, text + '\n');
      lines.push(TYPESCRIPT.has(block.lang) ? `npx tsx '${file}'` : `node '${file}'`);
    }
  }
  // What the session exported, for the documents that build on it.
  lines.push(`printf '\\n::: end @%s\\n' "$EPOCHREALTIME" >&2`, `env -0 > '${envFile}'`);
  const script = path.join(folder, `${slug(doc)}.sh`);
  await writeFile(script, lines.join('\n') + '\n');
  return script;
}

interface PlannedBlock extends DocBlock {
  plan: Plan;
}

/** Runs the script in the folder with the environment; resolves with its exit code and output. */
function runScript(script: string, cwd: string, env: Record<string, string>, ms: number) {
  const child = spawn('bash', [script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  // The session's own process group: what a snippet left in the background ends with it.
  const stopAll = () => {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const timer = setTimeout(stopAll, ms);
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      stopAll();
      resolve({ code, output });
    });
  });
}

const parseEnv = (text: string) =>
  Object.fromEntries(
    text
      .split('\0')
      .filter((entry) => entry.includes('='))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );

const docs = await documents();
const sources = await testSources();
const planned = new Map<string, PlannedBlock[]>();
for (const doc of docs)
  planned.set(
    doc,
    (await docBlocks(doc)).map((b) => ({ ...b, plan: planOf(b, sources) })),
  );

describe('every shell and TypeScript snippet of the docs runs against a server', () => {
  // The reader's clone: a folder inside the repository (so `npx parley` and imports of @botpress/*
  // resolve) where the server runs, its data in ./data as `parley serve` keeps it. Each document's
  // session has a folder of its own in it, with a copy of the examples (a deploy writes its link into
  // the package's folder) and ./data the server's, so that sessions run side by side.
  let clone: string;
  let server: ParleyProcess;
  let reader: Reader;
  /** The environment the README's walk-through leaves exported: where every other document starts. */
  let walkthrough: Record<string, string> = {};
  const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const folderOf = (doc: string) => path.join(clone, slug(doc));

  before(async () => {
    await mkdir('.tmp', { recursive: true });
    clone = await mkdtemp(path.resolve('.tmp/docs-'));
    server = runParley(['serve', '--port', '0'], {}, { cwd: clone });
    const [, host = ''] = await server.waitFor(/"url":"http:\/\/([^"]+)"/);
    const [, workspaceId = ''] = await server.waitFor(/workspace id: (\S+)/);
    const [, token = ''] = await server.waitFor(/owner token: +(bp_pat_\S+)/);
    reader = { host, token, workspaceId };
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (clone) await rm(clone, { recursive: true, force: true });
  });

  test('`npx parley` and `npx tsx`, as the snippets write them, resolve in the reader’s clone', async () => {
    const folder = folderOf('npx');
    await mkdir(folder);
    await writeFile(path.join(folder, 'hello.mts'), "const n: number = 2;\nconsole.log('tsx', n);\n");
    const script = path.join(folder, 'npx.sh');
    await writeFile(script, 'set -euo pipefail\nnpx parley --version\nnpx tsx hello.mts\n');
    const { code, output } = await runScript(script, folder, base, 60_000);
    assert.equal(code, 0, output);
    assert.match(output, /^parley \d+\.\d+\.\d+$/m);
    assert.match(output, /^tsx 2$/m);
  });

  test('every marked block says why it is not run, or is read by the test that runs it', () => {
    for (const blocks of planned.values()) {
      for (const b of blocks) {
        const where = `${b.doc}:${b.line}`;
        if (b.plan.kind === 'not run') {
          assert.ok(b.plan.reason.length > 0, `${where}: "not run:" gives a reason`);
          assert.ok(
            runnable(b),
            `${where}: only shell and TypeScript blocks run, so only they are marked "not run"`,
          );
        }
        if (b.plan.kind === 'read by')
          assert.ok(b.plan.test, `${where}: no test reads <!-- ${b.marker} --> of ${b.doc} (docsBlock)`);
      }
    }
  });

  /** Runs the document's session in its folder; fails naming the block and command that failed. */
  async function session(doc: string, env: Record<string, string>): Promise<string> {
    const folder = folderOf(doc);
    await mkdir(folder);
    await cp('examples', path.join(folder, 'examples'), { recursive: true });
    await symlink(path.join(clone, 'data'), path.join(folder, 'data'));
    const envFile = path.join(folder, 'exported.env');
    const script = await scriptOf(doc, planned.get(doc) ?? [], folder, reader, envFile);
    const started = Date.now();
    const serverLogFrom = server.output().length;
    const { code, output } = await runScript(script, folder, env, 100_000);
    const marks = [...output.matchAll(/^::: (\S+) @([\d.]+)$/gm)].map(([, at = '', time = '']) => ({
      at,
      time: +time,
    }));
    // The server's warnings and errors meanwhile (other sessions' too): a snippet's curl shows no status.
    const serverTrouble = server
      .output()
      .slice(serverLogFrom)
      .split('\n')
      .filter((line) => /"level":(40|50|60)\b|"statusCode":[45]\d\d\b/.test(line))
      .join('\n');
    assert.equal(
      code,
      0,
      `the snippet at ${marks.at(-1)?.at} failed:\n${output.slice(-4000)}\n` +
        `the server's warnings, errors and refusals meanwhile:\n${serverTrouble.slice(-4000)}`,
    );
    // Where the time goes, to keep the test short: each block's seconds.
    const took = marks
      .slice(0, -1)
      .map((m, i) => `${m.at.split(':')[1]}: ${((marks[i + 1]?.time ?? m.time) - m.time).toFixed(1)} s`);
    process.stdout.write(
      `${doc}: ${((Date.now() - started) / 1000).toFixed(1)} s (block at line ${took.join(', ')})\n`,
    );
    return envFile;
  }

  test('README.md', { timeout: 120_000 }, async () => {
    const exported = parseEnv(await readFile(await session('README.md', base), 'utf8'));
    walkthrough = Object.fromEntries(
      Object.entries(exported).filter(([k]) => !(k in base) && !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(k)),
    );
  });

  describe('the other documents, from where the walk-through leaves a reader', { concurrency: 3 }, () => {
    for (const doc of docs) {
      if (doc === 'README.md' || !(planned.get(doc) ?? []).some((b) => b.plan.kind === 'run')) continue;
      test(doc, { timeout: 120_000 }, async () => {
        await session(doc, { ...base, ...walkthrough });
      });
    }
  });

  test('the TypeScript snippets type-check against the official clients (tsc, strict)', async () => {
    // tsx runs them without looking at types: a misspelt option the server ignores would pass unseen.
    const folders = (await readdir(clone, { withFileTypes: true })).filter((e) => e.isDirectory());
    const files = (
      await Promise.all(
        folders.map(async (f) =>
          (await readdir(path.join(clone, f.name)))
            .filter((n) => n.endsWith('.mts'))
            .map((n) => path.join(clone, f.name, n)),
        ),
      )
    ).flat();
    assert.ok(files.length > 0, 'the sessions saved their TypeScript snippets');
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
    const tsc = spawn(
      process.execPath,
      [TSC, ...options, '--target', 'es2022', '--types', 'node', '--skipLibCheck', ...files],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    tsc.stdout.on('data', (c: Buffer) => (output += c.toString()));
    tsc.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => tsc.on('exit', resolve));
    assert.equal(
      code,
      0,
      `a snippet does not type-check (each is saved as <document>-<line>.mts):\n${output}`,
    );
  });

  test('the count of snippets run and not run, per document', () => {
    const lines: string[] = [];
    for (const [doc, blocks] of planned) {
      const count = (kind: Plan['kind']) => blocks.filter((b) => b.plan.kind === kind).length;
      if (blocks.every((b) => b.plan.kind === 'not code')) continue;
      lines.push(
        `${doc}: ${count('run')} run, ${count('file')} saved, ${count('read by')} run by other tests, ${count('not run')} not run`,
      );
      for (const b of blocks)
        if (b.plan.kind === 'not run') lines.push(`  not run ${b.doc}:${b.line}: ${b.plan.reason}`);
    }
    process.stdout.write(lines.join('\n') + '\n');
    assert.ok([...planned.values()].flat().some((b) => b.plan.kind === 'run'));
  });
});
