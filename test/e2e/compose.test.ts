// compose.yaml's scale-out, run here without a container runtime: each Parley replica is started with the
// command and environment the image and the compose file give it (the Dockerfile's ENV, ENTRYPOINT and
// CMD; the service's environment), on this machine's PostgreSQL and Redis, behind nginx with the
// deployment's own configuration (deploy/nginx.conf). A visitor talks through the proxy while requests spread over both replicas,
// and keeps talking when one of them stops.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { parse } from 'yaml';
import { SETTINGS } from '../../src/config.ts';
import { deployWithCli, ownerTarget, textOf } from '../helpers/chat-bots.ts';
import { runParley } from '../helpers/process.ts';
import type { ParleyProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/runtime.ts';
import { STARTS_WITHIN_MS } from '../helpers/serve-processes.ts';
import { freePort } from '../helpers/ports.ts';
import { freshPostgresSchema, testStores } from '../helpers/stores.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const NGINX = '/usr/sbin/nginx';
const nginxMissing = existsSync(NGINX)
  ? false
  : 'nginx is not installed (apt-get install nginx-light; .ci/run installs it)';
if (nginxMissing && process.env.CI === 'true') throw new Error(nginxMissing);
const postgres = (await testStores()).find((store) => store.name === 'postgres');
const skip = nginxMissing || postgres?.skip || false;

/** The Dockerfile's instructions of its last stage, continuation lines joined. */
function lastStage(dockerfile: string): { instruction: string; args: string }[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: string[][] = [];
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  return (stages.at(-1) ?? []).map((line) => {
    const [instruction = '', ...rest] = line.split(/\s+/);
    return { instruction: instruction.toUpperCase(), args: rest.join(' ') };
  });
}

interface ComposeService {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
}

const root = path.resolve('.');
const stage = lastStage(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
const execForm = (name: string): string[] => {
  const found = stage.find((i) => i.instruction === name);
  assert.ok(found, `the Dockerfile has no ${name}`);
  return JSON.parse(found.args) as string[];
};
const imageEnv = Object.fromEntries(
  stage
    .filter((i) => i.instruction === 'ENV')
    .flatMap((i) => i.args.split(/\s+/).map((pair) => pair.split('=') as [string, string])),
);
const compose = parse(readFileSync(path.join(root, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const replicas = Object.entries(compose.services).filter(([, s]) => s.build === '.');
const proxyConfig = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');
const declared = new Set<string>(Object.values(SETTINGS).map((setting) => setting.env));

describe('compose.yaml: two replicas behind the proxy, on PostgreSQL and Redis', { skip }, () => {
  const procs: ParleyProcess[] = [];
  let proxy: ReturnType<typeof spawn> | undefined;
  let work = '';
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined;
  let publicUrl = '';
  const token = `bp_pat_compose_${'x'.repeat(24)}`;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'parley-compose-'));
    schema = await freshPostgresSchema();
    const proxyPort = await freePort();
    publicUrl = `http://127.0.0.1:${proxyPort}`;
    let proxied = proxyConfig.replace(/listen 8080;/, `listen 127.0.0.1:${proxyPort};`);
    // The image's command, without tini (the host's init reaps here).
    const [, , ...command] = execForm('ENTRYPOINT');
    const args = [...command.slice(2), ...execForm('CMD')];
    assert.deepEqual(command.slice(0, 2), ['node', '/app/bin/parley.js']);
    for (const [name, service] of replicas) {
      const port = await freePort();
      const env: Record<string, string> = { ...imageEnv };
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        // What compose substitutes from .env (or its default), then what differs outside the compose network:
        // this machine's database (a schema of its own) and Redis, a port and a data folder per replica.
        env[key] = value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
      }
      env.DATABASE_URL = schema.url;
      env.REDIS_URL = REDIS_URL;
      env.PARLEY_PUBLIC_URL = publicUrl;
      env.PARLEY_ADMIN_TOKEN = token;
      env.HOST = '127.0.0.1';
      env.PORT = String(port);
      env.DATA_DIR = path.join(work, name);
      const proc = runParley(args, env);
      procs.push(proc);
      await proc.waitFor(/Parley is listening/, STARTS_WITHIN_MS);
      proxied = proxied.replace(`${name}:${imageEnv.PORT}`, `127.0.0.1:${port}`);
    }
    // The nginx image's own main configuration around it; here every path is the test's.
    const config = path.join(work, 'nginx.conf');
    await writeFile(path.join(work, 'default.conf'), proxied);
    await writeFile(
      config,
      `worker_processes 1;\nerror_log ${work}/error.log;\npid ${work}/nginx.pid;\nevents {}\nhttp {\n` +
        ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
          .map((t) => `  ${t}_temp_path ${work}/${t};\n`)
          .join('') +
        `  access_log off;\n  include ${work}/default.conf;\n}\n`,
    );
    proxy = spawn(NGINX, ['-c', config, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
    await waitFor(
      'the proxy to answer',
      async () => (await fetch(`${publicUrl}/readyz`).catch(() => undefined))?.ok === true,
      30_000,
    );
  });

  after(async () => {
    proxy?.kill('SIGTERM');
    for (const proc of procs) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    await schema?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('the compose file names only declared settings, and the proxy names every replica', () => {
    assert.equal(replicas.length, 2, 'two replicas of the image');
    for (const [name, service] of replicas) {
      for (const key of Object.keys(service.environment ?? {}))
        assert.ok(declared.has(key), `${name} sets ${key}, which is no setting of Parley's`);
      assert.match(
        proxyConfig,
        new RegExp(`\\bserver ${name}:${imageEnv.PORT}\\b`),
        `deploy/nginx.conf names ${name}`,
      );
    }
    for (const key of Object.keys(imageEnv).filter((k) => k !== 'NODE_ENV'))
      assert.ok(declared.has(key), `the Dockerfile sets ${key}, which is no setting of Parley's`);
  });

  test('a visitor talks through the proxy to both replicas, and goes on when one stops', async () => {
    const echo = await deployWithCli(await ownerTarget(publicUrl, token), 'examples/echo-bot', ['--new']);
    assert.ok(echo.webhookUrl.startsWith(publicUrl), `the chat URL ${echo.webhookUrl} is the proxy's`);

    const visitor = await chat.Client.connect({ apiUrl: echo.webhookUrl });
    const { conversation } = await visitor.createConversation({});
    const heard: string[] = [];
    const listener = await visitor.listenConversation({ id: conversation.id });
    listener.on('message_created', (message) => {
      if (message.userId !== visitor.user.id) heard.push(textOf(message));
    });
    const say = async (text: string) => {
      await visitor.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } });
      await waitFor(
        `the echo of "${text}" on the listener`,
        async () => heard.some((h) => h.includes(text)),
        30_000,
      );
    };
    for (let i = 0; i < 6; i++) await say(`through the proxy ${i}`);
    // Requests are logged by route: each replica served some of the visitor's (round robin).
    for (const [index, proc] of procs.entries())
      assert.match(
        proc.output(),
        /"url":"\/chat\/:webhookId\/messages"/,
        `replica ${index + 1} served none of the visitor's messages`,
      );

    // One replica stops (an upgrade, a crash): the proxy sends the visitor to the other.
    const [first] = procs;
    assert.ok(first);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    await listener.disconnect();
    const again = await visitor.listenConversation({ id: conversation.id });
    again.on('message_created', (message) => {
      if (message.userId !== visitor.user.id) heard.push(textOf(message));
    });
    for (let i = 0; i < 3; i++) await say(`after a replica stopped ${i}`);
    await again.disconnect();
  });
});
