import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, ForbiddenError } from '@botpress/client';
import { SETTINGS } from '../../src/config.ts';
import { runParley } from '../helpers/process.ts';
import type { ParleyProcess } from '../helpers/process.ts';
import { LISTENING, STARTS_WITHIN_MS } from '../helpers/serve-processes.ts';

async function serve(dataDir: string, env: Record<string, string> = {}) {
  const proc = runParley(['serve', '--port', '0', '--data-dir', dataDir], env);
  const [, url] = await proc.waitFor(LISTENING, STARTS_WITHIN_MS);
  return { proc, url: url as string };
}

async function stop(proc: ParleyProcess): Promise<number | null> {
  proc.child.kill('SIGTERM');
  return proc.exited;
}

describe('parley serve (SQLite in DATA_DIR)', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  test('first start prints a workspace id and a working owner token once, never in a log line', async () => {
    const { proc, url } = await serve(dataDir);
    const [, workspaceId] = await proc.waitFor(/workspace id: (\S+)/);
    const [, token] = await proc.waitFor(/owner token: +(bp_pat_\S+)/);
    assert.ok(token && token.length >= 7 + 43, 'a 256-bit token');
    const client = new Client({ apiUrl: url, token, workspaceId });
    const { bot } = await client.createBot({ name: 'first' });
    assert.equal((await client.listBots({})).bots[0]?.id, bot.id);
    for (const line of proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))) {
      assert.ok(!line.includes(token), `a log line holds the token: ${line}`);
    }
    assert.equal(await stop(proc), 0);

    const again = await serve(dataDir);
    await new Promise((r) => setTimeout(r, 300));
    assert.doesNotMatch(again.proc.output(), /owner token/);
    const { bots } = await new Client({ apiUrl: again.url, token, workspaceId }).listBots({});
    assert.deepEqual(
      bots.map((b) => b.id),
      [bot.id],
      'data survives a restart',
    );
    assert.equal(await stop(again.proc), 0);
  });

  test('operator commands refuse unknown workspaces and accounts', async () => {
    const member = runParley([
      'member',
      'add',
      '--data-dir',
      dataDir,
      '--workspace',
      'wkspace_nope',
      '--email',
      'a@b.c',
      '--role',
      'viewer',
    ]);
    assert.equal(await member.exited, 1);
    assert.match(member.output(), /no workspace wkspace_nope/);
    const token = runParley(['token', 'create', '--data-dir', dataDir, '--email', 'nobody@example.com']);
    assert.equal(await token.exited, 1);
    assert.match(token.output(), /no account has the email nobody@example.com/);
    const role = runParley([
      'member',
      'add',
      '--data-dir',
      dataDir,
      '--workspace',
      'x',
      '--email',
      'a@b.c',
      '--role',
      'king',
    ]);
    assert.equal(await role.exited, 1);
    assert.match(role.output(), /--role must be one of/);
  });
});

describe('parley serve with PARLEY_ADMIN_TOKEN', () => {
  test('a fresh server uses the given token, and SIGTERM lets a request in flight finish', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-'));
    const token = 'bp_pat_scripted_token_0123456789abcdef';
    const { proc, url } = await serve(dataDir, { PARLEY_ADMIN_TOKEN: token });
    const [, workspaceId] = await proc.waitFor(/workspace id: (\S+)/);
    assert.match(proc.output(), /owner token: +the value of PARLEY_ADMIN_TOKEN/);
    assert.ok(!proc.output().includes(token), 'the configured token is never printed');
    const client = new Client({ apiUrl: url, token, workspaceId });
    assert.equal((await client.getAccount({})).account.email, 'owner@parley.local');

    // A member added by the operator, with a token from the CLI, acts with its role.
    const add = runParley([
      'member',
      'add',
      '--data-dir',
      dataDir,
      '--workspace',
      workspaceId as string,
      '--email',
      'viewer@example.com',
      '--role',
      'viewer',
    ]);
    assert.equal(await add.exited, 0, add.output());
    const create = runParley(['token', 'create', '--data-dir', dataDir, '--email', 'viewer@example.com']);
    assert.equal(await create.exited, 0, create.output());
    const viewerToken = /^(bp_pat_\S+)$/m.exec(create.output())?.[1];
    assert.ok(viewerToken, create.output());
    const viewer = new Client({ apiUrl: url, token: viewerToken, workspaceId });
    assert.deepEqual((await viewer.listBots({})).bots, []);
    await assert.rejects(viewer.createBot({ name: 'nope' }), ForbiddenError);

    // Start a request, stop the server while its body is still arriving, then finish the body.
    const body = JSON.stringify({ name: 'in-flight' });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${url}/v1/admin/bots`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'x-workspace-id': workspaceId as string,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        proc.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 300);
      }, 200);
    });
    const answer = await response;
    assert.equal(answer.status, 200, answer.body);
    assert.equal((JSON.parse(answer.body) as { bot: { name: string } }).bot.name, 'in-flight');
    assert.equal(await proc.exited, 0);
    await assert.rejects(fetch(`${url}/healthz`), 'no longer accepting');
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a busy port, an unknown command and a folder without the data are one line each', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    assert.ok(address !== null && typeof address === 'object');
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-busy-'));
    try {
      const busy = runParley(['serve', '--port', String(address.port), '--data-dir', dataDir]);
      assert.equal(await busy.exited, 1);
      assert.match(
        busy.output(),
        new RegExp(`^parley: 127\\.0\\.0\\.1:${address.port} is in use .*--port or PORT$`, 'm'),
      );
      assert.doesNotMatch(busy.output(), /\n\s+at /, 'no stack trace');
    } finally {
      taken.close();
    }

    const unknown = runParley(['frobnicate']);
    assert.equal(await unknown.exited, 1);
    assert.equal(
      unknown.output().trim(),
      'parley: unknown command "frobnicate": parley help lists the commands',
    );

    // Away from the server's data, operator commands refuse rather than work on a new, empty database.
    const empty = path.join(dataDir, 'elsewhere');
    const token = runParley(['token', 'create', '--data-dir', empty, '--email', 'owner@parley.local']);
    assert.equal(await token.exited, 1);
    assert.match(token.output(), /^parley: no Parley database at .*elsewhere.*DATA_DIR/m);
    const member = runParley([
      'member',
      'add',
      '--data-dir',
      empty,
      '--workspace',
      'w',
      '--email',
      'a@b.c',
      '--role',
      'viewer',
    ]);
    assert.equal(await member.exited, 1);
    assert.match(member.output(), /no Parley database at/);
    await rm(dataDir, { recursive: true, force: true });
  });

  test('bad settings are refused with a clear message', async () => {
    const bad = runParley(['serve', '--port', 'abc']);
    assert.equal(await bad.exited, 1);
    assert.match(bad.output(), /PORT must be an integer/);
    const short = runParley(['serve', '--port', '0'], { PARLEY_ADMIN_TOKEN: 'short' });
    assert.equal(await short.exited, 1);
    assert.match(short.output(), /at least 24 characters/);
  });
});

describe('parley --help', () => {
  test('lists every setting with its flag, environment variable and default', async () => {
    const proc = runParley(['--help']);
    assert.equal(await proc.exited, 0);
    const usage = proc.output();
    for (const setting of Object.values(SETTINGS)) {
      const fallback = 'default' in setting ? `, default ${setting.default}` : '';
      assert.ok(
        usage.includes(`--${setting.flag} <value>   (${setting.env}${fallback})`),
        `--${setting.flag} is listed`,
      );
      assert.ok(usage.includes(setting.description), `${setting.env} is described`);
    }
  });
});
