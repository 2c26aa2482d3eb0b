import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import * as chat from '@botpress/chat';
import { Client } from '@botpress/client';
import { runParley } from './process.ts';
import { startTestServer } from './server.ts';
import type { TestServer } from './server.ts';
import type { TestStore } from './stores.ts';

/** Where `parley deploy` sends a package: a server's URL, the owner's token and the workspace. */
export interface DeployTarget {
  url: string;
  token: string;
  workspaceId: string;
}

/** Where to deploy on a server started with `PARLEY_ADMIN_TOKEN` as `token`: its owner's first workspace. */
export async function ownerTarget(url: string, token: string): Promise<DeployTarget> {
  const { workspaces } = await new Client({ apiUrl: url, token }).listWorkspaces({});
  const workspaceId = workspaces[0]?.id;
  assert.ok(workspaceId, 'the first start made no workspace');
  return { url, token, workspaceId };
}

export interface Deployment {
  botId: string;
  /** The bot's chat URL, as `parley deploy` prints it: what `chat.Client.connect({ apiUrl })` takes. */
  webhookUrl: string;
  output: string;
}

/** Deploys a package folder through the real `parley deploy` command; fails the test if it does not exit 0. */
export async function deployWithCli(
  target: DeployTarget,
  dir: string,
  args: string[] = [],
): Promise<Deployment> {
  const proc = runParley(['deploy', dir, ...args], {
    PARLEY_URL: target.url,
    PARLEY_TOKEN: target.token,
    PARLEY_WORKSPACE_ID: target.workspaceId,
  });
  const code = await proc.exited;
  const output = proc.output();
  assert.equal(code, 0, `parley deploy ${dir} exited ${code}:\n${output}`);
  const botId = /\bbot (bot_\S+)/.exec(output)?.[1];
  const webhookUrl = /^Chat webhook URL: (\S+)$/m.exec(output)?.[1];
  assert.ok(botId, `parley deploy printed no bot id:\n${output}`);
  assert.ok(webhookUrl, `parley deploy printed no chat URL:\n${output}`);
  return { botId, webhookUrl, output };
}

/** A message as the official chat client gives it (`message_created` signals, listMessages). */
export interface ChatMessage {
  id: string;
  createdAt: string;
  conversationId: string;
  userId: string;
  isBot?: boolean;
  payload: Record<string, unknown>;
}

/** The text of a message (`payload.text`), or a description of it when it has none. */
export function textOf(message: Pick<ChatMessage, 'payload'>): string {
  const text = message.payload.text;
  return typeof text === 'string'
    ? text
    : `<${String(message.payload.type)} ${JSON.stringify(message.payload)}>`;
}

type Payload = Parameters<chat.AuthenticatedClient['createMessage']>[0]['payload'];

/**
 * A chat user in one conversation with a bot, through the official @botpress/chat client, with a live
 * listener (SSE) that records every message of the conversation in arrival order.
 */
export class ChatSession {
  /** Every `message_created` signal received, in order (the user's own messages too). */
  readonly received: ChatMessage[] = [];
  readonly errors: Error[] = [];
  /** How many bot replies `nextReplies` has handed out. */
  private cursor = 0;
  private readonly listeners: chat.SignalListener[] = [];

  private constructor(
    readonly client: chat.AuthenticatedClient,
    readonly conversationId: string,
  ) {}

  /** Connects a user (a new one, or the one of `userKey`), opens a conversation and listens to it. */
  static async open(webhookUrl: string, options: { userKey?: string } = {}): Promise<ChatSession> {
    const client = await chat.Client.connect({
      apiUrl: webhookUrl,
      ...(options.userKey !== undefined && { userKey: options.userKey }),
    });
    const { conversation } = await client.createConversation({});
    const session = new ChatSession(client, conversation.id);
    await session.listen();
    return session;
  }

  /** Connects again (e.g. to a restarted server) as the same user, to an existing conversation, not listening yet. */
  static async resume(webhookUrl: string, userKey: string, conversationId: string): Promise<ChatSession> {
    const client = await chat.Client.connect({ apiUrl: webhookUrl, userKey });
    return new ChatSession(client, conversationId);
  }

  get userKey(): string {
    return this.client.user.key;
  }

  async listen(): Promise<void> {
    const listener = await this.client.listenConversation({ id: this.conversationId });
    listener.on('message_created', (data) => this.received.push(data as unknown as ChatMessage));
    listener.on('error', (err) => this.errors.push(err));
    this.listeners.push(listener);
  }

  /** Sends a text message; answers the message's id (also its id on the Runtime API). */
  say(text: string): Promise<string> {
    return this.send({ type: 'text', text });
  }

  async send(payload: Record<string, unknown>): Promise<string> {
    const { message } = await this.client.createMessage({
      conversationId: this.conversationId,
      payload: payload as Payload,
    });
    return message.id;
  }

  /** The bot's messages received so far, in order. */
  botReplies(): ChatMessage[] {
    return this.received.filter((m) => m.isBot === true);
  }

  /**
   * Waits (up to `ms`) until `count` more bot replies than handed out so far have arrived, and answers
   * exactly those. A reply that should not have come shows up as the first of the next call.
   */
  async nextReplies(count: number, ms = 10_000): Promise<ChatMessage[]> {
    const from = this.cursor;
    await this.waitUntil(
      `${count} more bot replies (after ${from})`,
      () => this.botReplies().length >= from + count,
      ms,
    );
    this.cursor = from + count;
    return this.botReplies().slice(from, from + count);
  }

  /** Like `nextReplies`, answering the texts. */
  async nextTexts(count: number, ms?: number): Promise<string[]> {
    return (await this.nextReplies(count, ms)).map(textOf);
  }

  /** The bot replies received past those handed out by `nextReplies`. */
  unread(): ChatMessage[] {
    return this.botReplies().slice(this.cursor);
  }

  /** Every message of the conversation, oldest first, read with listMessages (all pages). */
  async history(): Promise<ChatMessage[]> {
    const all = (await this.client.list
      .messages({ conversationId: this.conversationId })
      .collect()) as unknown as ChatMessage[];
    return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async waitUntil(what: string, check: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) {
        assert.fail(
          `timed out after ${ms} ms waiting for ${what}; bot replies so far: ${JSON.stringify(
            this.botReplies().map(textOf),
          )}; listener errors: ${this.errors.map((e) => e.message).join('; ') || 'none'}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close(): Promise<void> {
    for (const listener of this.listeners.splice(0)) await listener.disconnect();
  }
}

/**
 * Waits until the runtime event of a chat message has left `pending` (its turn is over) and answers its
 * status. `runtime` is a Runtime API client for the bot.
 */
export async function turnOutcome(
  runtime: Client,
  messageId: string,
  ms = 10_000,
): Promise<{ status: string; failureReason: string | null | undefined }> {
  const deadline = Date.now() + ms;
  let last = 'no event';
  for (;;) {
    const { events } = await runtime.listEvents({ messageId });
    const event = events.find((e) => e.type === 'message_created');
    if (event) {
      last = event.status;
      if (event.status !== 'pending') return { status: event.status, failureReason: event.failureReason };
    }
    if (Date.now() > deadline)
      assert.fail(`the turn of message ${messageId} did not end in ${ms} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What `chatServer` gives the tests of a suite. */
export interface ChatServer {
  /** The suite's server (started by its `before`). */
  readonly t: TestServer;
  /** A temp folder of the suite, removed after it. */
  readonly tmp: string;
  /** Where `parley deploy` sends packages: the server, as its owner. */
  target: () => DeployTarget;
  /** A new chat user in a new conversation with the bot of `webhookUrl`, listening (closed after the suite). */
  talk: (webhookUrl: string) => Promise<ChatSession>;
}

/**
 * For the suite it is called in (a `describe`): a test server on `store` started before its tests, a
 * temp folder, and chat sessions, all closed and removed after them.
 */
export function chatServer(store: TestStore, tmpPrefix: string): ChatServer {
  let server: TestServer | undefined;
  let folder: string | undefined;
  const sessions: ChatSession[] = [];
  before(async () => {
    server = await startTestServer(store);
    folder = await mkdtemp(path.join(os.tmpdir(), tmpPrefix));
  });
  after(async () => {
    for (const session of sessions) await session.close();
    await server?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    assert.ok(value !== undefined, 'the suite’s server has started');
    return value;
  };
  return {
    get t() {
      return started(server);
    },
    get tmp() {
      return started(folder);
    },
    target: () => {
      const { url, token, workspaceId } = started(server);
      return { url, token, workspaceId };
    },
    talk: async (webhookUrl) => {
      const session = await ChatSession.open(webhookUrl);
      sessions.push(session);
      return session;
    },
  };
}
