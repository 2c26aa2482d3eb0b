import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { mkdir } from 'node:fs/promises';
import { loadPackage, PackageError } from '../src/package/load.ts';
import { chatServer, deployWithCli, turnOutcome } from './helpers/chat-bots.ts';
import { runParley } from './helpers/process.ts';
import { testStores } from './helpers/stores.ts';

test('a package’s knowledge bases are checked: documents inside the package, of indexed formats, and cards naming them', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-kb-package-'));
  try {
    await mkdir(path.join(dir, 'knowledge'));
    await mkdir(path.join(dir, 'workflows'));
    await writeFile(path.join(dir, 'bot.json'), '{ "formatVersion": 1, "name": "checked" }');
    await writeFile(path.join(dir, 'ok.md'), '# ok');
    await writeFile(path.join(dir, 'image.png'), 'png');
    await writeFile(
      path.join(dir, 'knowledge', 'docs.json'),
      JSON.stringify({ files: ['ok.md', 'missing.md', '../outside.md', 'image.png'] }),
    );
    await writeFile(
      path.join(dir, 'workflows', 'main.json'),
      JSON.stringify({
        nodes: [
          {
            id: 'start',
            type: 'start',
            cards: [
              { type: 'knowledge', knowledgeBase: 'docs', onNotFound: 'nowhere' },
              { type: 'knowledge', knowledgeBase: 'manuals' },
              { type: 'knowledge', knowledgeBase: 'kb_01JZZZZZZZZZZZZZZZZZZZZZZZ' },
            ],
          },
        ],
      }),
    );
    const error = await loadPackage(dir).then(
      () => assert.fail('the package loaded'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof PackageError);
    assert.deepEqual(
      error.problems.map((p) => [p.file, p.field, p.message]),
      [
        ['knowledge/docs.json', '/files/1', 'no file missing.md'],
        ['knowledge/docs.json', '/files/2', 'must be a path inside the package folder, like docs/faq.md'],
        [
          'knowledge/docs.json',
          '/files/3',
          'must be a document of a format that is indexed: .md, .markdown, .txt, .html, .htm, .pdf',
        ],
        ['workflows/main.json', '/nodes/0/cards/0/onNotFound', 'no node "nowhere" in workflow main'],
        [
          'workflows/main.json',
          '/nodes/0/cards/1/knowledgeBase',
          'no knowledge base "manuals" (knowledge/manuals.json), nor an id (kb_…)',
        ],
      ],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

for (const store of await testStores()) {
  describe(
    `knowledge bases of bot packages and the knowledge card (${store.name})`,
    { skip: store.skip },
    () => {
      const suite = chatServer(store, 'parley-kb-');
      const { target, talk } = suite;

      test('the FAQ example answers questions from its deployed knowledge base, through the Chat API', async () => {
        const deployed = await deployWithCli(target(), 'examples/faq-bot');
        assert.match(deployed.output, /Knowledge base faq: 1 uploaded, 0 unchanged, 0 removed/);
        const chat = await talk(deployed.webhookUrl);

        await chat.say('How long does shipping take to Europe?');
        const [shipping] = await chat.nextTexts(1);
        assert.match(shipping ?? '', /^Orders leave the warehouse within two working days\./);
        assert.match(shipping ?? '', /\n\nSource: faq\.md$/);

        const refund = await chat.say('Can I get a refund for a returned item?');
        assert.match((await chat.nextTexts(1))[0] ?? '', /Refunds are paid to the original payment method/);

        await chat.say('zebras xylophones');
        assert.match((await chat.nextTexts(1))[0] ?? '', /^I don't know that one yet/);

        // The set card after the knowledge card read event.kb (in the turns that found something).
        const runtime = suite.t.client({ botId: deployed.botId });
        const { conversationId } = (await runtime.getMessage({ id: refund })).message;
        const { state } = await runtime.getState({
          type: 'conversation',
          id: conversationId,
          name: 'variables',
        });
        const sources = state.payload.lastSources as string[];
        assert.ok(sources.length >= 1 && sources.every((s) => s === 'faq.md'), JSON.stringify(sources));

        // Deployed again unchanged: nothing is uploaded again.
        const again = await deployWithCli(target(), 'examples/faq-bot', ['--bot-id', deployed.botId]);
        assert.match(again.output, /Knowledge base faq: 0 uploaded, 1 unchanged, 0 removed/);
        const { knowledgeBases } = await runtime.listKnowledgeBases({});
        assert.deepEqual(
          knowledgeBases.map((k) => k.name),
          ['faq'],
        );
      });

      test('event.kb: the knowledge bases queried and the passages consulted, seen by later cards and hooks', async () => {
        const dir = path.join(suite.tmp, 'kb-hooks');
        await cp('test/fixtures/kb-hooks', dir, { recursive: true });
        const deployed = await deployWithCli(target(), dir);
        const chat = await talk(deployed.webhookUrl);
        const messageId = await chat.say('descale kettle');
        const [reply] = await chat.nextTexts(1);
        assert.equal(
          reply,
          'kb:docs first:docs/guide.md stored:2 score:number | hook sees 2: Descale the kettle every month with white vinegar.',
        );
        assert.equal(
          (await turnOutcome(suite.t.client({ botId: deployed.botId }), messageId)).status,
          'processed',
        );

        // The package changes: the changed document is uploaded again and its new text is found.
        await writeFile(
          path.join(dir, 'guide.md'),
          '# Guide\n\nKettles must be descaled weekly with citric acid.\n',
        );
        const redeployed = await deployWithCli(target(), dir, ['--bot-id', deployed.botId]);
        assert.match(redeployed.output, /Knowledge base docs: 1 uploaded, 0 unchanged, 0 removed/);
        await chat.say('descale kettle');
        assert.match((await chat.nextTexts(1))[0] ?? '', /hook sees 1: Kettles must be descaled weekly/);
      });

      test('parley files upload|list|delete and parley kb list|search', async () => {
        const { bot } = await suite.t.client().createBot({ name: 'cli-files' });
        const env = { PARLEY_URL: suite.t.url, PARLEY_TOKEN: suite.t.token, PARLEY_BOT_ID: bot.id };
        const run = async (args: string[]) => {
          const proc = runParley(args, env);
          const code = await proc.exited;
          return { code, output: proc.output() };
        };
        const doc = path.join(suite.tmp, 'manual.md');
        await writeFile(doc, '# Manual\n\nThe red button restarts the machine.\n');
        const uploaded = await run([
          'files',
          'upload',
          doc,
          '--key',
          'docs/manual.md',
          '--kb',
          'manuals',
          '--tag',
          'lang=en',
        ]);
        assert.equal(uploaded.code, 0, uploaded.output);
        assert.match(
          uploaded.output,
          /Uploaded .*manual\.md as docs\/manual\.md \(file_\w+\): indexing_completed/,
        );
        const listed = await run(['files', 'list', '--tag', 'lang=en']);
        assert.match(listed.output, /docs\/manual\.md\s+\d+ bytes\s+indexing_completed\s+.*kbId=kb_/);
        const kbs = await run(['kb', 'list']);
        assert.match(kbs.output, /kb_\w+\s+manuals/);
        const searched = await run([
          'kb',
          'search',
          'manuals',
          'how',
          'do',
          'I',
          'restart',
          'the',
          'machine',
        ]);
        assert.equal(searched.code, 0, searched.output);
        assert.match(
          searched.output,
          /^1\. \[\d+\.\d{3}\] docs\/manual\.md\n {3}The red button restarts the machine\.$/m,
        );
        const deleted = await run(['files', 'delete', 'docs/manual.md']);
        assert.match(deleted.output, /Deleted docs\/manual\.md/);
        assert.equal((await run(['files', 'list'])).output, '');
        const missing = await run(['kb', 'search', 'nothing-here', 'question']);
        assert.equal(missing.code, 1);
        assert.match(missing.output, /no knowledge base "nothing-here"/);
      });
    },
  );
}
