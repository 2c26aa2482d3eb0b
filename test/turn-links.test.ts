// What ties a turn's work to its event (issue 36): each reply a turn sends (`message.eventId`) and each
// line it logs (`eventId` of getBotLogs' lines) names the event it answers, even when the turns of one
// conversation overlap; a line about a model call says so as data (`call`). The bots list gives each
// bot's status. Through the official client, on both stores.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logsSince, send, startChat, waitForTurn } from './helpers/deployed-bots.ts';
import { TURNS_BOT } from './helpers/turns-bot.ts';
import type { RuntimeEvent } from './helpers/deployed-bots.ts';
import { modelBotSuite } from './helpers/model-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { testStores } from './helpers/stores.ts';
import { DEFAULT_FALLBACK_TEXT } from '../src/domain/chat/fallback-message.ts';

for (const store of await testStores()) {
  describe(`turn links (${store.name})`, { skip: store.skip }, () => {
    const suite = modelBotSuite(store, () => TURNS_BOT);

    test('each reply and each log line names the event of its turn, though the turns overlap', async () => {
      const { t, bot } = suite;
      const since = new Date().toISOString();
      const chatter = await startChat(bot);
      const sent: string[] = [];
      for (const text of ['hi', 'boom', 'ok']) sent.push(await send(chatter, text));
      const events: RuntimeEvent[] = [];
      for (const messageId of sent) events.push(await waitForTurn(bot, chatter, { messageId }));
      const [hi, boom, ok] = events.map((e) => e.id);
      assert.deepEqual(
        events.map((e) => e.status),
        ['processed', 'failed', 'processed'],
      );

      const { messages } = await bot.client.listMessages({ conversationId: chatter.runtimeConversationId });
      const linked = messages
        .map((m) => [m.payload.text, m.direction, (m as { eventId?: string }).eventId] as const)
        .sort(([a], [b]) => String(a).localeCompare(String(b)));
      assert.deepEqual(linked, [
        ['boom', 'incoming', undefined],
        ['hi', 'incoming', undefined],
        ['ok', 'incoming', undefined],
        // The failed turn's one reply: the bot's fallback message, never the error.
        [DEFAULT_FALLBACK_TEXT, 'outgoing', boom],
        ['You said: hi', 'outgoing', hi],
        ['You said: ok', 'outgoing', ok],
      ]);

      const lines = await waitFor(
        'the three turns’ lines',
        async () => {
          const found = (await logsSince(t, bot.botId, since)).filter(
            (l) => l.conversationId === chatter.runtimeConversationId,
          );
          return found.some((l) => l.message.startsWith('The turn of event')) && found.length >= 4 && found;
        },
        5000,
      );
      const byLine = lines.map((l) => [l.message.replace(/event \S+ /, 'event E '), l.eventId]);
      assert.deepEqual(byLine, [
        ['turn for: hi', hi],
        ['turn for: boom', boom],
        [
          'The turn of event E (message_created) failed: code card 0 of node "route" in workflow "main" failed (runtime): Error: boom was said',
          boom,
        ],
        ['turn for: ok', ok],
      ]);
      assert.ok(
        lines.every((l) => l.call === undefined),
        'no line here tells of a call',
      );
    });

    test('a model call’s line tells of it as data: its kind and how long it took', async () => {
      const { t, bot } = suite;
      const since = new Date().toISOString();
      const chatter = await startChat(bot);
      const event = await waitForTurn(bot, chatter, { messageId: await send(chatter, 'write a poem') });
      const line = await waitFor(
        'the model call’s line',
        async () =>
          (await logsSince(t, bot.botId, since)).find((l) => l.message.startsWith('aiGenerate card')) ??
          false,
        5000,
      );
      assert.equal(line.eventId, event.id);
      assert.equal(line.call?.kind, 'model');
      const ms = /, (\d+) ms$/.exec(line.message)?.[1];
      assert.equal(line.call?.durationMs, Number(ms), 'the duration the line says');
    });

    test('the bots list gives each bot’s status', async () => {
      const { t, bot } = suite;
      const { bots } = await t.client().listBots({});
      const listed = bots.find((b) => b.id === bot.botId) as { status?: string } | undefined;
      assert.equal(listed?.status, 'active');
    });
  });
}
