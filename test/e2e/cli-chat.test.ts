// `parley chat` as a user runs it, with piped input: bots deployed with the CLI answer in the terminal.
// The command speaks HTTP to the server, whatever its store: SQLite only (the APIs it calls are tested
// on both).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { writePackage } from '../helpers/deployed-bots.ts';
import { runParley } from '../helpers/process.ts';
import { showcaseBot } from '../helpers/showcase-bot.ts';
import type { ParleyProcess } from '../helpers/process.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';

/** Writes a line to the command's input, as a user pressing Enter. */
const type = (proc: ParleyProcess, line: string) => proc.child.stdin.write(`${line}\n`);

{
  const store = { name: 'sqlite' } as const;
  describe(`parley chat (${store.name})`, () => {
    let t: TestServer;
    let env: Record<string, string>;
    let echo: { botId: string; webhookUrl: string };
    let menu: { botId: string };
    let work: string;

    before(async () => {
      t = await startTestServer(store);
      env = { PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: t.workspaceId };
      echo = await deployWithCli(t, 'examples/echo-bot');
      menu = await deployWithCli(t, 'examples/menu-bot');
      work = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-chat-'));
    });
    after(async () => {
      await t?.close();
      await rm(work, { recursive: true, force: true });
    });

    test('chat --bot: each line is sent, the echo bot’s reply printed; the end of input leaves', async () => {
      const proc = runParley(['chat', '--bot', echo.botId], env);
      await proc.waitFor(/Chatting with echo-bot/, 60_000);
      type(proc, 'hello there');
      await proc.waitFor(/^echo-bot: You said: hello there$/m);
      type(proc, 'and again');
      proc.child.stdin.end();
      assert.equal(await proc.exited, 0, proc.output());
      assert.match(proc.output(), /^echo-bot: You said: and again$/m, 'the last reply came before leaving');
    });

    test('chat: the menu bot’s choices are numbered, and a number answers', async () => {
      const proc = runParley(['chat', '--bot', menu.botId], env);
      await proc.waitFor(/Chatting with menu-bot/, 60_000);
      type(proc, 'hi');
      await proc.waitFor(
        /menu-bot: What would you like to do\?\n {2}1\. FAQ\n {2}2\. Tell you my name\n {2}3\. Bye/,
      );
      type(proc, '1');
      await proc.waitFor(/menu-bot: Ask me about our hours, prices or how to contact us\./);
      type(proc, 'what are your hours?');
      await proc.waitFor(/menu-bot: We are open from 9:00 to 17:00/);
      proc.child.stdin.end();
      assert.equal(await proc.exited, 0);
      // The number went to the bot as the option: its label, and its value.
      const runtime = t.client({ botId: menu.botId });
      const { conversations } = await runtime.listConversations({});
      const texts = await Promise.all(
        conversations.map(async (c) => (await runtime.listMessages({ conversationId: c.id })).messages),
      );
      const answer = texts.flat().find((m) => m.payload.text === 'FAQ');
      assert.equal(answer?.payload.value, 'faq');
    });

    test('chat --webhook: pictures, cards and files as text with their links; --json prints payloads', async () => {
      const dir = path.join(work, 'showcase');
      await writePackage(dir, showcaseBot('https://shop.example.com/shoes.png'));
      const cards = await deployWithCli(t, dir);
      const proc = runParley(['chat', '--webhook', cards.webhookUrl]);
      await proc.waitFor(/Chatting with bot/, 60_000);
      type(proc, 'show');
      await proc.waitFor(/bot: \[file\] Size guide: https:\/\/shop\.example\.com\/sizes\.pdf/);
      const shown = proc.output();
      assert.match(shown, /^bot: \[picture\] https:\/\/shop\.example\.com\/shoes\.png$/m);
      assert.match(
        shown,
        /^bot: \[card\] Trail shoes — Light and waterproof\n {2}picture: \S+\n {2}1\. Add to cart\n {2}Details: https:\/\/shop\.example\.com\/shoes$/m,
      );
      assert.match(
        shown,
        /^bot: \[card\] Boots — New this season\n {2}picture: \S+\n {2}1\. Pick Boots\n {2}\[card\] Sandals — New this season\n {2}picture: \S+\n {2}2\. Pick Sandals$/m,
      );
      assert.match(shown, /^bot: Which size\?\n {2}1\. EU 38\n {2}2\. EU 40\n {2}3\. EU 42$/m);
      // The numbers answer the last message that offered some: the dropdown.
      type(proc, '2');
      await proc.waitFor(/^bot: You picked: EU 40$/m);
      proc.child.stdin.end();
      assert.equal(await proc.exited, 0);

      const raw = runParley(['chat', '--webhook', cards.webhookUrl, '--json']);
      await raw.waitFor(/Chatting with/, 60_000);
      type(raw, 'show');
      raw.child.stdin.end();
      assert.equal(await raw.exited, 0);
      const payloads = raw
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { type: string });
      assert.deepEqual(
        payloads.map((p) => p.type),
        ['image', 'card', 'carousel', 'dropdown', 'file'],
      );
    });

    test('chat refuses what it cannot do, saying why', async () => {
      const neither = runParley(['chat'], env);
      assert.equal(await neither.exited, 1);
      assert.match(neither.output(), /give one of --bot and --webhook/);
      const unknown = runParley(['chat', '--bot', 'bot_nope'], env);
      assert.equal(await unknown.exited, 1);
      assert.match(unknown.output(), /ResourceNotFound/);
    });
  });
}
