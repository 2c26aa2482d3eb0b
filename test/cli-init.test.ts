// `parley init` as a newcomer meets it: each template's package deploys as it is and answers.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deployWithCli } from './helpers/chat-bots.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { runParley } from './helpers/process.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';

describe('parley init (sqlite)', () => {
  let t: TestServer;
  let models: ModelServer;
  let work: string;
  before(async () => {
    // The knowledge-agent template's model: it echoes what it is asked.
    models = await startModelServer();
    t = await startTestServer({ name: 'sqlite' }, parleySettings(models));
    work = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-init-'));
  });
  after(async () => {
    await t?.close();
    await models?.close();
    await rm(work, { recursive: true, force: true });
  });

  for (const [template, reply] of [
    ['echo', /bot: You said: what are your opening hours\?/],
    ['menu', /bot: Welcome to Parley Inc\.!/],
    ['faq', /bot: The shop is open from 9 am to 6 pm/],
    ['knowledge-agent', /bot: echo: what are your opening hours\?/],
  ] as const) {
    test(`init --template ${template}: the package deploys as it is, and answers`, async () => {
      const created = runParley(['init', `my-${template}`, '--template', template], {}, { cwd: work });
      assert.equal(await created.exited, 0, created.output());
      const dir = path.join(work, `my-${template}`);
      const manifest = JSON.parse(await readFile(path.join(dir, 'bot.json'), 'utf8')) as { name: string };
      assert.equal(manifest.name, `my-${template}`);
      assert.match(
        await readFile(path.join(dir, 'README.md'), 'utf8'),
        new RegExp(`parley deploy my-${template}`),
      );
      const deployed = await deployWithCli(t, dir);
      const chat = runParley(['chat', '--webhook', deployed.webhookUrl]);
      await chat.waitFor(/Chatting with/, 60_000);
      chat.child.stdin.write('what are your opening hours?\n');
      await chat.waitFor(reply);
      chat.child.stdin.end();
      assert.equal(await chat.exited, 0);
    });
  }

  test('init refuses a folder that is not empty, and an unknown template', async () => {
    const again = runParley(['init', 'my-echo'], {}, { cwd: work });
    assert.equal(await again.exited, 1);
    assert.match(again.output(), /already exists/);
    const unknown = runParley(['init', 'x', '--template', 'shop'], {}, { cwd: work });
    assert.equal(await unknown.exited, 1);
    assert.match(unknown.output(), /--template must be one of echo, menu, faq, knowledge-agent/);
  });
});
