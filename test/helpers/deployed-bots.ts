// Deployed bot packages, driven as users and hosts see them: packages written into temp folders,
// deployed with `parley deploy`, talked to through the Chat API and watched through the Runtime API.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as chat from '@botpress/chat';
import type { Client } from '@botpress/client';
import { runParley } from './process.ts';
import { waitFor } from './runtime.ts';
import type { TestBot } from './runtime.ts';
import type { TestServer } from './server.ts';

/** A package's files: path relative to the package folder -> text. */
export type Files = Record<string, string>;

export const json = (value: unknown): string => JSON.stringify(value, null, 2) + '\n';

/** A package named `name` whose one workflow answers each message with `cards`, in one standard node. */
export function oneNodePackage(name: string, cards: unknown[]): Files {
  return {
    'bot.json': json({ formatVersion: 1, name }),
    'workflows/main.json': json({
      nodes: [
        { id: 'start', type: 'start', next: 'answer' },
        { id: 'answer', type: 'standard', cards },
      ],
    }),
  };
}

export async function writePackage(dir: string, files: Files): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

/** A bot deployed from a package, with a bot API key, a Runtime client as the bot, and its chat channel. */
export interface DeployedBot extends TestBot {
  webhookUrl: string;
}

/** Writes the package into a fresh temp folder and deploys it with `parley deploy`, as a developer would. */
export async function deployPackage(t: TestServer, files: Files): Promise<DeployedBot> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-bot-'));
  try {
    await writePackage(dir, files);
    return await deployFolder(t, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Deploys the package folder `dir` with `parley deploy` (and its flags `args`), as a developer would. */
export async function deployFolder(t: TestServer, dir: string, args: string[] = []): Promise<DeployedBot> {
  const proc = runParley(['deploy', dir, ...args], {
    PARLEY_URL: t.url,
    PARLEY_TOKEN: t.token,
    PARLEY_WORKSPACE_ID: t.workspaceId,
  });
  const code = await proc.exited;
  assert.equal(code, 0, `parley deploy failed:\n${proc.output()}`);
  const botId = /bot (bot_\S+)/.exec(proc.output())?.[1];
  assert.ok(botId, `parley deploy printed no bot id:\n${proc.output()}`);
  const admin = t.client();
  const { value } = await admin.createBotApiKey({ botId });
  const { bot } = await admin.getBot({ id: botId });
  const webhookUrl = bot.integrations.chat?.webhookUrl;
  assert.ok(webhookUrl, 'a deployed bot has its chat channel');
  return {
    botId,
    key: value,
    client: t.client({ token: value, botId, workspaceId: undefined }),
    webhookUrl,
  };
}

/** A chat user of a bot with one conversation, and the Runtime ids of both. */
export interface Chatter {
  chat: chat.AuthenticatedClient;
  /** The conversation id the chat user knows. */
  conversationId: string;
  /** The same conversation's id on the Runtime API (what bot code sees as event.conversationId). */
  runtimeConversationId: string;
  /** The chat user's id on the Runtime API. */
  runtimeUserId: string;
}

export async function startChat(bot: DeployedBot, userId?: string): Promise<Chatter> {
  const client = await chat.Client.connect({ apiUrl: bot.webhookUrl, ...(userId && { userId }) });
  const conversationId = `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  await client.createConversation({ id: conversationId });
  const conversations = await allConversations(bot.client);
  const known = new Set(conversationIds.get(bot.botId) ?? []);
  const fresh = conversations.filter((c) => !known.has(c.id));
  assert.equal(fresh.length, 1, 'exactly one new runtime conversation');
  const runtimeConversationId = (fresh[0] as { id: string }).id;
  conversationIds.set(bot.botId, [...known, runtimeConversationId]);
  const { users } = await bot.client.listUsers({ conversationId: runtimeConversationId });
  assert.equal(users.length, 1, 'the conversation has its creator as its only participant');
  return {
    chat: client,
    conversationId,
    runtimeConversationId,
    runtimeUserId: (users[0] as { id: string }).id,
  };
}

const conversationIds = new Map<string, string[]>();

async function allConversations(client: Client): Promise<{ id: string }[]> {
  const all: { id: string }[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.listConversations({ nextToken });
    all.push(...page.conversations);
    nextToken = page.meta.nextToken;
  } while (nextToken);
  return all;
}

/** Sends a text message as the chat user; answers the message id. */
export async function send(c: Chatter, text: string): Promise<string> {
  const { message } = await c.chat.createMessage({
    conversationId: c.conversationId,
    payload: { type: 'text', text },
  });
  return message.id;
}

export interface RuntimeMessage {
  id: string;
  type: string;
  userId: string;
  payload: Record<string, unknown>;
  tags: Record<string, string>;
}

/** Every message of the conversation, oldest first (ids are monotonic ULIDs). */
export async function messagesOf(bot: DeployedBot, c: Chatter): Promise<RuntimeMessage[]> {
  const all: RuntimeMessage[] = [];
  let nextToken: string | undefined;
  do {
    const page = await bot.client.listMessages({ conversationId: c.runtimeConversationId, nextToken });
    all.push(...(page.messages as RuntimeMessage[]));
    nextToken = page.meta.nextToken;
  } while (nextToken);
  return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The bot's replies in the conversation, oldest first, as their text (or JSON for other payloads). */
export async function replies(bot: DeployedBot, c: Chatter): Promise<string[]> {
  return (await messagesOf(bot, c))
    .filter((m) => m.userId === bot.botId)
    .map((m) => (typeof m.payload.text === 'string' ? m.payload.text : JSON.stringify(m.payload)));
}

/** Waits until the bot has sent `count` replies in all; answers them all. */
export async function waitForReplies(
  bot: DeployedBot,
  c: Chatter,
  count: number,
  timeoutMs = 15_000,
): Promise<string[]> {
  let last: string[] = [];
  try {
    return await waitFor(
      `${count} replies`,
      async () => {
        last = await replies(bot, c);
        return last.length >= count && last;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new assert.AssertionError({
      message: `${(err as Error).message}; replies so far: ${JSON.stringify(last)}`,
    });
  }
}

export interface RuntimeEvent {
  id: string;
  type: string;
  status: string;
  failureReason: string | null;
  conversationId?: string;
  userId?: string;
  messageId?: string;
  payload: Record<string, unknown>;
  createdAt: string;
}

async function eventsOf(bot: DeployedBot, conversationId: string): Promise<RuntimeEvent[]> {
  const all: RuntimeEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await bot.client.listEvents({ conversationId, nextToken });
    all.push(...(page.events as RuntimeEvent[]));
    nextToken = page.meta.nextToken;
  } while (nextToken);
  return all;
}

/** Waits for the turn of an event (found by the event id or by its message id) to end; answers the event. */
export async function waitForTurn(
  bot: DeployedBot,
  c: Chatter,
  match: { messageId: string } | { eventId: string },
  timeoutMs = 15_000,
): Promise<RuntimeEvent> {
  return waitFor(
    `the turn of ${JSON.stringify(match)} to end`,
    async () => {
      const events = await eventsOf(bot, c.runtimeConversationId);
      const event = events.find((e) =>
        'messageId' in match ? e.messageId === match.messageId : e.id === match.eventId,
      );
      return event && event.status !== 'pending' && event.status !== 'scheduled' && event;
    },
    timeoutMs,
  );
}

/** Sends a message and waits for its turn to end. */
export async function sendAndWait(bot: DeployedBot, c: Chatter, text: string): Promise<RuntimeEvent> {
  const messageId = await send(c, text);
  return waitForTurn(bot, c, { messageId });
}

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  conversationId?: string;
  userId?: string;
  workflowId?: string;
  /** Parley's: the event whose turn logged the line, and the call it tells of. */
  eventId?: string;
  call?: { kind: 'model' | 'tool'; durationMs: number };
}

/** The bot's log lines since `since` (ISO), every page. */
export async function logsSince(t: TestServer, botId: string, since: string): Promise<LogLine[]> {
  const admin = t.client();
  const all: LogLine[] = [];
  let nextToken: string | undefined;
  do {
    const page = await admin.getBotLogs({ id: botId, timeStart: since, nextToken });
    all.push(...(page.logs as LogLine[]));
    nextToken = page.nextToken;
  } while (nextToken);
  return all;
}

/** Waits for a log line matching `pattern` (and `level` if given) written since `since`; answers it. */
export async function waitForLog(
  t: TestServer,
  botId: string,
  since: string,
  pattern: RegExp,
  level?: string,
  timeoutMs = 10_000,
): Promise<LogLine> {
  let seen: LogLine[] = [];
  try {
    return await waitFor(
      `a log line matching ${pattern}`,
      async () => {
        seen = await logsSince(t, botId, since);
        return seen.find((l) => pattern.test(l.message) && (level === undefined || l.level === level));
      },
      timeoutMs,
    );
  } catch (err) {
    throw new assert.AssertionError({
      message: `${(err as Error).message}; lines: ${JSON.stringify(seen.map((l) => `${l.level} ${l.message}`)).slice(0, 3000)}`,
    });
  }
}

/** A bot state's payload, or undefined when it does not exist. */
export async function stateOf(
  bot: DeployedBot,
  name: string,
  type: 'bot' | 'conversation' | 'user' = 'bot',
  id = bot.botId,
): Promise<Record<string, unknown> | undefined> {
  try {
    const { state } = await bot.client.getState({ type, id, name });
    return state.payload;
  } catch {
    return undefined;
  }
}
