// The container image (Dockerfile) as an operator runs it: it starts as a user of its own, reports itself
// healthy, serves a bot deployed from outside, stops cleanly on SIGTERM and keeps its data in its volume.
// The image is built beforehand (.ci/run builds it and names it in PARLEY_CONTAINER_IMAGE): a build takes
// minutes, more than a test should.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { deployWithCli, ownerTarget, textOf } from '../helpers/chat-bots.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/runtime.ts';

const run = promisify(execFile);
const image = process.env.PARLEY_CONTAINER_IMAGE;
const skip =
  image === undefined
    ? 'PARLEY_CONTAINER_IMAGE is not set: build the image first (podman build -t parley .), as .ci/run does'
    : false;
if (skip && process.env.CI === 'true')
  throw new Error('on CI the container image must be built and named in PARLEY_CONTAINER_IMAGE (.ci/run)');

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

describe('the container image', { skip }, () => {
  const suffix = randomBytes(4).toString('hex');
  const name = `parley-test-${suffix}`;
  const volume = `parley-test-data-${suffix}`;
  const token = `bp_pat_${randomBytes(24).toString('hex')}`;
  let port = 0;
  let url = '';

  /** Starts the image on the same port each time, so that the public URL the server gives stays true. */
  async function start(): Promise<void> {
    port ||= await freePort();
    url = `http://127.0.0.1:${port}`;
    await podman(
      'run',
      ...['--detach', '--name', name, '--publish', `127.0.0.1:${port}:3000`],
      ...['--volume', `${volume}:/data`, '--env', `PARLEY_ADMIN_TOKEN=${token}`],
      ...['--env', `PARLEY_PUBLIC_URL=${url}`, String(image)],
    );
    await waitFor(
      'the container to answer /readyz',
      async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true,
      60_000,
    );
  }

  async function stop(): Promise<{ exitCode: number; seconds: number }> {
    const began = performance.now();
    await podman('stop', '--time', '20', name);
    const seconds = (performance.now() - began) / 1000;
    const exitCode = Number(await podman('inspect', '--format', '{{.State.ExitCode}}', name));
    await podman('rm', name);
    return { exitCode, seconds };
  }

  before(start);
  after(async () => {
    await podman('rm', '--force', name).catch(() => undefined);
    await podman('volume', 'rm', '--force', volume).catch(() => undefined);
  });

  test('runs as a user of its own, and its health check passes', async () => {
    const uid = await podman('exec', name, 'id', '-u');
    assert.notEqual(uid, '0', 'the server runs as root in the image');
    assert.equal(await podman('exec', name, 'id', '-un'), 'parley');
    // The image's own HEALTHCHECK command, run as the runtime runs it.
    await podman('healthcheck', 'run', name);
    const health = await podman('inspect', '--format', '{{.Config.Healthcheck.Test}}', name);
    assert.match(health, /readyz/);
  });

  test('serves a bot deployed from outside, stops on SIGTERM and keeps its data in the volume', async () => {
    const echo = await deployWithCli(await ownerTarget(url, token), 'examples/echo-bot', ['--new']);
    assert.ok(echo.webhookUrl.startsWith(url), `the chat URL ${echo.webhookUrl} is not the public URL`);

    const visitor = await chat.Client.connect({ apiUrl: echo.webhookUrl });
    const { conversation } = await visitor.createConversation({});
    await visitor.createMessage({
      conversationId: conversation.id,
      payload: { type: 'text', text: 'hello container' },
    });
    const replied = async () => {
      const { messages } = await visitor.listMessages({ conversationId: conversation.id });
      return messages.some((m) => m.userId !== visitor.user.id && /hello container/.test(textOf(m)));
    };
    await waitFor('the echo bot to answer', replied, 30_000);

    const stopped = await stop();
    assert.equal(stopped.exitCode, 0, 'the server did not exit 0 on SIGTERM');
    assert.ok(stopped.seconds < 15, `stopping took ${stopped.seconds.toFixed(1)} s: SIGTERM was not heeded`);

    await start();
    // The same visitor, bot and conversation after a new container on the same volume.
    const again = await chat.Client.connect({ apiUrl: echo.webhookUrl, userKey: visitor.user.key });
    const { messages } = await again.listMessages({ conversationId: conversation.id });
    assert.ok(
      messages.some((m) => textOf(m) === 'hello container'),
      'the conversation was lost with the container',
    );
  });
});
