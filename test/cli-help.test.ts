// The CLI as a newcomer meets it: `--help` on every command, the version, `validate` reporting every
// problem in one run, paths from the folder the user is in, and `npx parley` in the clone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { json, writePackage } from './helpers/deployed-bots.ts';
import { runParley } from './helpers/process.ts';

const COMMANDS = [
  'serve',
  'token',
  'member',
  'backup',
  'restore',
  'validate',
  'deploy',
  'logs',
  'chat',
  'init',
  'files',
  'kb',
  'tables',
];

describe('parley help, version, validate and paths', () => {
  let work: string;
  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-help-'));
    await writePackage(path.join(work, 'my-echo'), {
      'bot.json': json({ formatVersion: 1, name: 'my-echo' }),
      'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start' }] }),
    });
  });
  after(() => rm(work, { recursive: true, force: true }));

  test('every command answers --help (and help <command>); --version and version print the version', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    const runs = [
      ...COMMANDS.map((c) => ({ args: [c, '--help'], pattern: new RegExp(`^usage: parley ${c}`) })),
      { args: ['help', 'chat'], pattern: /^usage: parley chat/ },
      { args: ['--help'], pattern: /^Usage: parley <command>/ },
      { args: ['--version'], pattern: new RegExp(`^parley ${version.replace(/\./g, '\\.')}$`, 'm') },
      { args: ['version'], pattern: new RegExp(`^parley ${version.replace(/\./g, '\\.')}$`, 'm') },
    ];
    const results = await Promise.all(
      runs.map(async ({ args }) => {
        const proc = runParley(args);
        return { code: await proc.exited, output: proc.output() };
      }),
    );
    runs.forEach(({ args, pattern }, i) => {
      const { code, output } = results[i] as { code: number | null; output: string };
      assert.equal(code, 0, `parley ${args.join(' ')}: ${output}`);
      assert.match(output, pattern, `parley ${args.join(' ')}`);
    });
  });

  test('validate reports every problem in one run: a schema problem hides none of the others', async () => {
    await writePackage(path.join(work, 'broken'), {
      'bot.json': json({ formatVersion: 1, name: 'broken' }),
      'workflows/main.json': json({
        nodes: [
          { id: 'start', type: 'start', next: 'nowhere' },
          { id: 'a', type: 'standard', cards: [{ type: 'sing' }, { type: 'code' }] },
          {
            id: 'b',
            type: 'standard',
            cards: [
              { type: 'say', message: '{{ 1 + }}' },
              { type: 'goto', workflow: 'x' },
            ],
          },
        ],
      }),
    });
    const proc = runParley(['validate', 'broken'], {}, { cwd: work });
    assert.equal(await proc.exited, 1);
    const output = proc.output();
    assert.match(output, /has 5 problems/);
    for (const pattern of [
      /\/nodes\/0\/next: no node "nowhere"/,
      /\/nodes\/1\/cards\/0\/type: must be one of/,
      /\/nodes\/1\/cards\/1: a code card has exactly one of code and file/,
      /\/nodes\/2\/cards\/0\/message: `1 \+` is not one JavaScript expression/,
      /\/nodes\/2\/cards\/1\/workflow: no workflow "x"/,
    ]) {
      assert.match(output, pattern);
    }
  });

  test('a file to upload that does not exist is named in a one-line error, not a stack trace', async () => {
    const proc = runParley(
      ['files', 'upload', 'no-such-file.txt'],
      {
        PARLEY_URL: 'http://127.0.0.1:9',
        PARLEY_TOKEN: 'token',
        PARLEY_BOT_ID: 'bot_x',
      },
      { cwd: work },
    );
    assert.equal(await proc.exited, 1);
    assert.equal(proc.output().trim(), `parley: ${path.join(work, 'no-such-file.txt')}: no such file`);
  });

  test('paths are the user’s: from the current folder, and from INIT_CWD under npm run parley', async () => {
    const inFolder = runParley(['validate', 'my-echo'], {}, { cwd: work });
    assert.equal(await inFolder.exited, 0, inFolder.output());
    // `npm run parley -- validate my-echo` runs in Parley's folder; npm names the user's in INIT_CWD.
    const viaNpm = runParley(['validate', 'my-echo'], { npm_lifecycle_event: 'parley', INIT_CWD: work });
    assert.equal(await viaNpm.exited, 0, viaNpm.output());
    const elsewhere = runParley(['validate', 'my-echo']);
    assert.equal(await elsewhere.exited, 1);
    assert.match(elsewhere.output(), /my-echo is not a folder/);
  });

  test('npx parley runs the clone’s command, from the clone and from a folder in it', async () => {
    for (const cwd of ['.', 'examples']) {
      const child = spawn('npx', ['--no', 'parley', 'version'], { cwd, env: process.env });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
      assert.match(output, /^parley \d+\.\d+\.\d+/m, `npx parley version in ${cwd}`);
    }
  });
});
