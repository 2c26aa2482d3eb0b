// The knowledgeAnswer card: a search of the bot's knowledge bases, an answer from the passages alone
// with their citations, and no model call when nothing supports an answer; deployed with `parley deploy`,
// driven over the Chat API with the official client, against the tests' model server, on both stores.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { json, stateOf, writePackage } from './helpers/deployed-bots.ts';
import type { Files } from './helpers/deployed-bots.ts';
import { completionsAbout, firstExchange, modelBotSuite } from './helpers/model-bots.ts';
import { runParley } from './helpers/process.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

/** docs/llm.md's knowledgeAnswer example: the block under each `<!-- knowledge answer: <name> -->`. */
const exampleOfTheDocs = (marker: string) => docsBlock('docs/llm.md', marker);

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

/** The documented knowledge base, document and nodes, and nodes of the tests' own reached by a first word. */
async function helpDesk(): Promise<Files> {
  const documentedNodes = JSON.parse(await exampleOfTheDocs('knowledge answer: nodes')) as unknown[];
  return {
    'bot.json': json({ formatVersion: 1, name: 'help-desk' }),
    'knowledge/help.json': await exampleOfTheDocs('knowledge answer: knowledge/help.json'),
    'docs/returns.md': await exampleOfTheDocs('knowledge answer: docs/returns.md'),
    'knowledge/shipping.json': json({ files: ['docs/shipping.md'] }),
    'docs/shipping.md': '# Shipping\n\nParcels to Europe arrive within four working days.\n',
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [
            { when: "event.preview.startsWith('strict')", to: 'strict' },
            { when: "event.preview.startsWith('plain')", to: 'plain' },
            { when: "event.preview.startsWith('kept')", to: 'kept' },
            { when: "event.preview.startsWith('both')", to: 'both' },
            { to: 'help' },
          ],
        },
        ...documentedNodes,
        {
          id: 'strict',
          type: 'standard',
          cards: [
            {
              type: 'knowledgeAnswer',
              knowledgeBase: ['help'],
              question: '{{ event.preview.slice(7) }}',
              minScore: 1_000_000,
              noAnswer: 'Nothing certain about {{ event.preview }}.',
              onNoAnswer: 'after',
            },
          ],
        },
        { id: 'after', type: 'standard', cards: [say('after no answer')] },
        {
          id: 'both',
          type: 'standard',
          cards: [
            {
              type: 'knowledgeAnswer',
              knowledgeBase: ['help', 'shipping'],
              question: '{{ event.preview.slice(5) }}',
            },
            { type: 'set', variable: 'conversation.kb', value: '{{ event.kb }}' },
          ],
        },
        {
          id: 'plain',
          type: 'standard',
          cards: [{ type: 'knowledgeAnswer', knowledgeBase: 'help' }, say('the next card')],
        },
        {
          id: 'kept',
          type: 'standard',
          cards: [
            {
              type: 'knowledgeAnswer',
              knowledgeBase: 'help',
              question: '{{ event.preview.slice(5) }}',
              model: 'fast',
              limit: 1,
              variable: 'workflow.answer',
            },
            { type: 'set', variable: 'conversation.kb', value: '{{ event.kb }}' },
            say('Kept: {{ workflow.answer }}'),
          ],
        },
      ],
    }),
  };
}

const RETURNS = 'You can return an item within 30 days of its delivery, in its original packaging.';

for (const store of await testStores()) {
  describe(`the knowledgeAnswer card (${store.name})`, { skip: store.skip }, () => {
    const suite = modelBotSuite(store, helpDesk);
    const ask = (text: string) => firstExchange(suite.bot, text);
    const callsAbout = (text: string) => completionsAbout(suite.models, text);
    type Call = { model: string; messages: { role: string; content: string }[] };

    test('the documented card: the passages numbered in the prompt, the answer with its cited file and a link to it', async () => {
      suite.models.replyWhen(
        'How long do I have to return an item?',
        'You have 30 days from delivery [1]. Refunds follow within five working days [1][7].',
      );
      const { replies: said } = await ask('How long do I have to return an item?');
      assert.equal(said.length, 1, JSON.stringify(said));
      const [answer, sources] = (said[0] ?? '').split('\n\nSources:\n');
      // [7] names no passage: it is taken out of the answer.
      assert.equal(
        answer,
        'You have 30 days from delivery [1]. Refunds follow within five working days [1].',
      );
      const link = /^- \[1\] \[returns\.md\]\((\S+)\)$/.exec(sources ?? '')?.[1];
      assert.ok(link, `one source, linked: ${JSON.stringify(sources)}`);
      const document = await fetch(link);
      assert.equal(document.status, 200);
      assert.match(await document.text(), /^# Returns/);

      const calls = callsAbout('How long do I have to return an item?');
      assert.equal(calls.length, 1);
      const { model, messages } = calls[0]?.body as Call;
      assert.equal(model, 'test-best');
      assert.deepEqual(
        messages.map((m) => m.role),
        ['system', 'user'],
      );
      const [system, user] = messages;
      assert.equal(user?.content, 'How long do I have to return an item?');
      assert.match(
        system?.content ?? '',
        /^You are the shop's support desk\. Answer in two sentences at most\./,
      );
      assert.match(system?.content ?? '', /cite the passages .* by their numbers in square brackets/);
      assert.match(system?.content ?? '', /answer NOT_IN_PASSAGES and nothing else/);
      assert.ok(
        system?.content.includes(`\n[1] (from returns.md)\n${RETURNS}`),
        `the passage, numbered, in the prompt: ${system?.content}`,
      );
    });

    test('the model finds no answer in the passages (NOT_IN_PASSAGES): noAnswer, then onNoAnswer', async () => {
      suite.models.replyWhen('Can I return a gift card?', 'NOT_IN_PASSAGES');
      const { replies: said } = await ask('Can I return a gift card?');
      assert.deepEqual(said, ["I don't know that one.", 'A person from the team will answer here.']);
      assert.equal(callsAbout('Can I return a gift card?').length, 1);
    });

    test('no passage scores minScore: the model is not called; noAnswer (a template), then onNoAnswer', async () => {
      const before = suite.models.requests.length;
      const { replies: said } = await ask('strict return an item');
      assert.deepEqual(said, ['Nothing certain about strict return an item.', 'after no answer']);
      assert.equal(suite.models.requests.length, before);
    });

    test('no passage found: the default words, without a model call, and the next card', async () => {
      const before = suite.models.requests.length;
      const { replies: said } = await ask('plain zebras xylophones');
      assert.deepEqual(said, [
        "Sorry, I don't know: I found no answer to that in what I know.",
        'the next card',
      ]);
      assert.equal(suite.models.requests.length, before);
    });

    test('into a variable, with event.kb filled as the knowledge card fills it', async () => {
      suite.models.replyWhen('when are refunds paid', 'Within five working days of the return [1].');
      const { replies: said, chatter } = await ask('kept when are refunds paid');
      assert.equal(said.length, 1, JSON.stringify(said));
      assert.match(
        said[0] ?? '',
        /^Kept: Within five working days of the return \[1\]\.\n\nSources:\n- \[1\] \[returns\.md\]\(http\S+\)$/,
      );
      const call = callsAbout('when are refunds paid')[0]?.body as Call;
      assert.equal(call.model, 'test-fast');
      const variables = await stateOf(suite.bot, 'variables', 'conversation', chatter.runtimeConversationId);
      const kb = variables?.kb as {
        included: { id: string; name: string }[];
        results: {
          text: string;
          score: number;
          file: { key: string; title: string };
          knowledgeBase: { name: string };
        }[];
      };
      assert.deepEqual(
        kb.included.map((k) => k.name),
        ['help'],
      );
      assert.match(kb.included[0]?.id ?? '', /^kb_/);
      // limit 1: the one passage searched for, which the prompt held.
      assert.equal(kb.results.length, 1);
      const [result] = kb.results;
      assert.equal(
        result?.text,
        'Refunds are paid to the original payment method within five working days of the return.',
      );
      assert.equal(typeof result?.score, 'number');
      assert.equal(result?.file.key, 'help/docs/returns.md');
      assert.equal(result?.knowledgeBase.name, 'help');
      assert.ok(call.messages[0]?.content.includes(`[1] (from returns.md)\n${result?.text}`));
    });

    test('several knowledge bases are searched together; each cited passage lists its own file', async () => {
      suite.models.replyWhen('return parcels', 'Returns take 30 days [1], parcels four days [2][3].');
      const { replies: said, chatter } = await ask('both return parcels');
      const sources = (said[0] ?? '').split('\n\nSources:\n')[1]?.split('\n') ?? [];
      assert.deepEqual(
        sources.map((line) => /^- \[(\d)\] \[(\S+)\]\(http\S+\)$/.exec(line)?.[1]),
        ['1', '2', '3'],
      );
      assert.deepEqual(
        new Set(sources.map((line) => /\[(\w+\.md)\]/.exec(line)?.[1])),
        new Set(['returns.md', 'shipping.md']),
      );
      const variables = await stateOf(suite.bot, 'variables', 'conversation', chatter.runtimeConversationId);
      const kb = variables?.kb as {
        included: { name: string }[];
        results: { knowledgeBase: { name: string } }[];
      };
      assert.deepEqual(
        kb.included.map((k) => k.name),
        ['help', 'shipping'],
      );
      assert.deepEqual(new Set(kb.results.map((r) => r.knowledgeBase.name)), new Set(['help', 'shipping']));
    });
  });
}

test('parley validate reports a bad knowledgeAnswer card at its line', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-kb-answer-'));
  try {
    await writePackage(dir, {
      'bot.json': json({ formatVersion: 1, name: 'bad-answers' }),
      'docs/a.md': '# A\n\nSome text.\n',
      'knowledge/help.json': json({ files: ['docs/a.md'] }),
      'workflows/main.json': json({
        nodes: [
          {
            id: 'start',
            type: 'start',
            cards: [
              { type: 'knowledgeAnswer' },
              { type: 'knowledgeAnswer', knowledgeBase: ['help', 'manuals'], onNoAnswer: 'nowhere' },
              { type: 'knowledgeAnswer', knowledgeBase: 'help', minScore: -1 },
            ],
          },
        ],
      }),
    });
    const proc = runParley(['validate', dir]);
    assert.equal(await proc.exited, 1);
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.includes('main.json:'))
      .map((l) => l.trim().slice(l.trim().indexOf('workflows/')));
    assert.deepEqual(lines, [
      'workflows/main.json:7:9 /nodes/0/cards/0/knowledgeBase: is required',
      'workflows/main.json:14:13 /nodes/0/cards/1/knowledgeBase/1: no knowledge base "manuals" (knowledge/manuals.json), nor an id (kb_…)',
      'workflows/main.json:16:25 /nodes/0/cards/1/onNoAnswer: no node "nowhere" in workflow main',
      'workflows/main.json:21:23 /nodes/0/cards/2/minScore: must be >= 0',
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
