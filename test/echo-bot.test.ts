// examples/echo-bot answers the way the hosted platform's echo test bot does: deployed with `parley
// deploy` to a real server, talked to with the official chat client and its SSE listener.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import type { Client } from '@botpress/client';
import { deployWithCli, turnOutcome } from './helpers/chat-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** Every command of the bot but `metadata`: the text of the message, and the type of its reply. */
const COMMANDS = [
  'text',
  'markdown',
  'image',
  'audio',
  'video',
  'file',
  'location',
  'choice',
  'dropdown',
  'card',
  'carousel',
  'bloc',
] as const;

type JsonObject = Record<string, unknown>;
type MessageCreated = chat.Signals['message_created'];
type EventCreated = chat.Signals['event_created'];
type ChatPayload = Parameters<chat.AuthenticatedClient['createMessage']>[0]['payload'];

/** The bot's sample messages, in the bot's format, as `workflows/main.json` declares them. */
const workflow = JSON.parse(await readFile('examples/echo-bot/workflows/main.json', 'utf8')) as {
  variables: { samples: { default: Record<string, JsonObject> } };
};
const SAMPLES = workflow.variables.samples.default;

/** A sample as a chat client sees it: a bloc's items `{ type, payload }` are flat, `{ type, ...payload }`. */
function chatView(sample: JsonObject): JsonObject {
  if (sample.type !== 'bloc') return sample;
  const items = sample.items as { type: string; payload: JsonObject }[];
  return { ...sample, items: items.map((item) => ({ type: item.type, ...item.payload })) };
}

const NOT_TEXT = (type: string) =>
  new RegExp(`^Sorry, I only understand text messages, not ${type} ones\\. Send me one of: text, markdown, `);

/** One signal of the conversation, as the official listener emitted it (`unknown`: its schemas refused it). */
type Signal =
  | { kind: 'message_created'; data: MessageCreated }
  | { kind: 'event_created'; data: EventCreated }
  | { kind: 'unknown'; data: unknown };

/**
 * A chat user in a new conversation with the bot, whose one listener (the official client's
 * `listenConversation`) records every signal in arrival order, the ones its schemas refused too.
 */
class Conversation {
  readonly signals: Signal[] = [];
  readonly errors: Error[] = [];
  /** How many bot replies `nextReply` has handed out. */
  private cursor = 0;

  private constructor(
    readonly client: chat.AuthenticatedClient,
    readonly id: string,
    private readonly listener: chat.SignalListener,
  ) {}

  static async open(webhookUrl: string): Promise<Conversation> {
    const client = await chat.Client.connect({ apiUrl: webhookUrl });
    const { conversation } = await client.createConversation({});
    const listener = await client.listenConversation({ id: conversation.id });
    const c = new Conversation(client, conversation.id, listener);
    listener.on('message_created', (data) => c.signals.push({ kind: 'message_created', data }));
    listener.on('event_created', (data) => c.signals.push({ kind: 'event_created', data }));
    listener.on('unknown', (data) => c.signals.push({ kind: 'unknown', data }));
    listener.on('error', (err) => c.errors.push(err));
    return c;
  }

  /** Sends a message; answers its id (also its id on the Runtime API). */
  async send(payload: JsonObject, metadata?: JsonObject): Promise<string> {
    const { message } = await this.client.createMessage({
      conversationId: this.id,
      payload: payload as ChatPayload,
      ...(metadata && { metadata }),
    });
    return message.id;
  }

  say(text: string, metadata?: JsonObject): Promise<string> {
    return this.send({ type: 'text', text }, metadata);
  }

  /**
   * The bot's messages so far, in order: the `message_created` signals from the bot, and those the
   * listener could not parse (`unknown`: a payload the official schemas refuse), as their raw text.
   */
  replies(): Signal[] {
    return this.signals.filter((s) =>
      s.kind === 'message_created'
        ? s.data.isBot
        : s.kind === 'unknown' && /"type"\s*:\s*"message_created"/.test(String(s.data)),
    );
  }

  /** The next bot reply not handed out yet (waiting for it), which the official schemas accepted. */
  async nextReply(what: string, ms = 10_000): Promise<MessageCreated> {
    const index = this.cursor;
    await this.until(`the reply to ${what}`, () => this.replies().length > index, ms);
    this.cursor++;
    const reply = this.replies()[index] as Signal;
    assert.equal(
      reply.kind,
      'message_created',
      `the official listener refused the reply to ${what}: ${JSON.stringify(reply.data)}`,
    );
    return reply.data;
  }

  /** Sends a last text and checks that its echo is the next reply: nothing else came before it. */
  async expectNoMoreReplies(): Promise<void> {
    await this.say('over');
    const last = await this.nextReply('over');
    assert.deepEqual(last.payload, { type: 'text', text: 'You said: over' }, 'no extra reply came before');
    assert.deepEqual(this.replies().slice(this.cursor), []);
    assert.deepEqual(this.errors, []);
  }

  async until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) {
        assert.fail(
          `timed out after ${ms} ms waiting for ${what}; signals so far: ${JSON.stringify(this.signals)}; ` +
            `listener errors: ${this.errors.map((e) => e.message).join('; ') || 'none'}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): Promise<void> {
    return this.listener.disconnect();
  }
}

test('the samples are real content: every string non-empty, every URL https', () => {
  const check = (value: unknown, at: string): void => {
    if (typeof value === 'string') assert.notEqual(value.trim(), '', `${at} is empty`);
    else if (Array.isArray(value)) value.forEach((v, i) => check(v, `${at}.${i}`));
    else if (value !== null && typeof value === 'object') {
      const object = value as JsonObject;
      for (const [k, v] of Object.entries(object)) {
        check(v, `${at}.${k}`);
        const isUrl = k.endsWith('Url') || (k === 'value' && object.action === 'url');
        if (isUrl) assert.equal(new URL(v as string).protocol, 'https:', `${at}.${k} is not an https URL`);
      }
    }
  };
  check(SAMPLES, 'samples');
  assert.deepEqual(Object.keys(SAMPLES).sort(), [...COMMANDS, 'metadata'].sort());
  for (const command of COMMANDS) assert.equal(SAMPLES[command]?.type, command);
});

for (const store of await testStores()) {
  describe(
    `examples/echo-bot, the hosted echo test bot's answers (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let botId: string;
      let webhookUrl: string;
      const conversations: Conversation[] = [];

      before(async () => {
        t = await startTestServer(store);
        ({ botId, webhookUrl } = await deployWithCli(t, 'examples/echo-bot'));
      });
      after(async () => {
        for (const c of conversations) await c.close();
        await t?.close();
      });

      const talk = async () => {
        const c = await Conversation.open(webhookUrl);
        conversations.push(c);
        return c;
      };
      /** The Runtime API as the bot. */
      const runtime = (): Client => t.client({ botId });

      test('each command gets one reply of its type, which the official listener accepts', async () => {
        const c = await talk();
        for (const command of COMMANDS) {
          await c.say(command);
          const reply = await c.nextReply(`"${command}"`);
          assert.equal(reply.isBot, true);
          assert.equal(reply.conversationId, c.id);
          assert.equal(reply.payload.type, command, `the reply to "${command}"`);
          assert.deepEqual(
            reply.payload,
            chatView(SAMPLES[command] as JsonObject),
            `the reply to "${command}"`,
          );
          assert.equal(reply.metadata, undefined, `the reply to "${command}" has no metadata`);
        }
        // Commands are matched whatever their case and the spaces around them; any other text is echoed.
        await c.say('  Image ');
        assert.equal((await c.nextReply('"  Image "')).payload.type, 'image');
        await c.say('hello');
        assert.deepEqual((await c.nextReply('"hello"')).payload, { type: 'text', text: 'You said: hello' });
        await c.say('an image, please');
        assert.deepEqual((await c.nextReply('a sentence')).payload, {
          type: 'text',
          text: 'You said: an image, please',
        });
        await c.expectNoMoreReplies();
        assert.deepEqual(
          c.signals.filter((s) => s.kind === 'unknown'),
          [],
          'the listener parsed every signal',
        );
      });

      test('bloc: the reply reaches the chat with flat items: a text, an image and an audio', async () => {
        const c = await talk();
        await c.say('bloc');
        const reply = await c.nextReply('"bloc"');
        assert.equal(reply.payload.type, 'bloc');
        const items = (reply.payload as { items: JsonObject[] }).items;
        assert.deepEqual(
          items.map((i) => i.type),
          ['text', 'image', 'audio'],
        );
        const [text, image, audio] = items as [JsonObject, JsonObject, JsonObject];
        assert.equal(typeof text.text, 'string');
        assert.match(image.imageUrl as string, /^https:\/\//);
        assert.match(audio.audioUrl as string, /^https:\/\//);
        for (const item of items)
          assert.equal('payload' in item, false, 'an item is flat, not { type, payload }');
        // The Chat API's listMessages shows it the same.
        const { messages } = await c.client.listMessages({ conversationId: c.id });
        assert.deepEqual(messages.find((m) => m.id === reply.id)?.payload, reply.payload);
        await c.expectNoMoreReplies();
      });

      test('metadata: the bot sees the message’s metadata and replies with it, beside the payload', async () => {
        const c = await talk();
        const metadata = {
          source: 'compatibility-suite',
          attempt: 2,
          nested: { ok: true, tags: ['a', 'b'] },
        };
        const sent = await c.say('metadata', metadata);
        const reply = await c.nextReply('"metadata"');
        assert.equal(reply.payload.type, 'text');
        assert.deepEqual(reply.metadata, metadata, 'the reply’s metadata is the message’s');
        assert.equal('metadata' in reply.payload, false, 'the payload does not carry it');
        assert.deepEqual(reply.payload, { type: 'text', text: SAMPLES.metadata?.text });

        // The Chat API's listMessages: the same, for the reply and for the user's message.
        const { messages } = await c.client.listMessages({ conversationId: c.id });
        const listed = messages.find((m) => m.id === reply.id);
        assert.deepEqual(listed?.metadata, metadata);
        assert.equal('metadata' in (listed?.payload ?? {}), false);
        assert.deepEqual(messages.find((m) => m.id === sent)?.metadata, metadata);

        // The bot's view (Runtime API): the user's message has `payload.metadata`.
        const { message } = await runtime().getMessage({ id: sent });
        assert.equal(message.type, 'text');
        assert.deepEqual(message.payload, { text: 'metadata', metadata });
        const { messages: botView } = await runtime().listMessages({
          conversationId: message.conversationId,
        });
        assert.deepEqual(botView.find((m) => m.id === sent)?.payload, { text: 'metadata', metadata });
        assert.deepEqual(botView.find((m) => m.id === reply.id)?.payload.metadata, metadata);

        // A message without metadata: the reply carries an empty one, as the hosted bot's does.
        await c.say('Metadata');
        const bare = await c.nextReply('"Metadata" without metadata');
        assert.deepEqual(bare.metadata, {});
        assert.deepEqual(bare.payload, { type: 'text', text: SAMPLES.metadata?.text });
        await c.expectNoMoreReplies();
      });

      test('a message that is not text gets a text saying so; a user’s bloc reaches the bot in the bot’s format', async () => {
        const c = await talk();
        const imageUrl = 'https://upload.wikimedia.org/wikipedia/commons/a/a9/Example.jpg';
        await c.send({ type: 'image', imageUrl });
        const toImage = await c.nextReply('an image');
        assert.equal(toImage.payload.type, 'text');
        assert.match((toImage.payload as { text: string }).text, NOT_TEXT('image'));

        const location = { type: 'location', latitude: 45.5, longitude: -73.56, address: 'Montréal' };
        await c.send(location);
        assert.match(
          ((await c.nextReply('a location')).payload as { text: string }).text,
          NOT_TEXT('location'),
        );

        const bloc = {
          type: 'bloc',
          items: [
            { type: 'text', text: 'Two things' },
            { type: 'image', imageUrl },
          ],
        };
        const blocId = await c.send(bloc);
        assert.match(((await c.nextReply('a bloc')).payload as { text: string }).text, NOT_TEXT('bloc'));
        // The user's own messages come back to the chat as they were sent.
        const own = c.signals.flatMap((s) => (s.kind === 'message_created' && !s.data.isBot ? [s.data] : []));
        assert.deepEqual(
          own.map((m) => m.payload),
          [{ type: 'image', imageUrl }, location, bloc],
        );
        // The bot sees the bloc in its format: items `{ type, payload }`.
        const { message } = await runtime().getMessage({ id: blocId });
        assert.equal(message.type, 'bloc');
        assert.deepEqual(message.payload, {
          items: [
            { type: 'text', payload: { text: 'Two things' } },
            { type: 'image', payload: { imageUrl } },
          ],
        });
        assert.equal((await turnOutcome(runtime(), blocId)).status, 'processed');
        await c.expectNoMoreReplies();
      });

      test('a custom event comes back from the bot (chat:sendEvent) with the payload that was sent', async () => {
        const c = await talk();
        const payload = { some: 'data', n: 1 };
        const { event } = await c.client.createEvent({ conversationId: c.id, payload });
        assert.deepEqual(event.payload, payload);
        await c.until('the bot’s event', () =>
          c.signals.some((s) => s.kind === 'event_created' && s.data.isBot),
        );
        const fromBot = c.signals.flatMap((s) =>
          s.kind === 'event_created' && s.data.isBot ? [s.data] : [],
        );
        assert.equal(fromBot.length, 1);
        assert.deepEqual(fromBot[0]?.payload, payload);
        assert.equal(fromBot[0]?.conversationId, c.id);

        // The bot got it as chat:custom, with the Runtime API ids of the user and the conversation.
        const received = await waitFor('the end of the chat:custom event’s turn', async () => {
          const { events } = await runtime().listEvents({ type: 'chat:custom' });
          const found = events.find((e) => e.id === event.id);
          return found && found.status !== 'pending' ? found : undefined;
        });
        assert.equal(
          received.status,
          'processed',
          `the turn ended ${received.status}: ${received.failureReason}`,
        );
        assert.ok(received.conversationId && received.userId);
        assert.deepEqual(received.payload, {
          userId: received.userId,
          conversationId: received.conversationId,
          payload,
        });
        const { conversation } = await runtime().getConversation({ id: received.conversationId });
        assert.equal(conversation.id, received.conversationId);
        // An event is not a message: no reply came for it.
        await c.expectNoMoreReplies();
      });
    },
  );
}
