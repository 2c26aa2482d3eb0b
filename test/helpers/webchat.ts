// The official webchat client (@botpress/webchat-client, what @botpress/webchat runs on) against a test
// server: a visitor opening the webchat (`/initialize`), its live signals recorded, and its REST client.
import assert from 'node:assert/strict';
import { createClient, initialize } from '@botpress/webchat-client';
import type { Client, Conversation, Message, User } from '@botpress/webchat-client';
import { parleyAdmin } from './parley-client.ts';
import type { TestServer } from './server.ts';

type Subscription = ReturnType<typeof initialize>;
/** The first frame of `/initialize`. */
interface InitData {
  conversation: Conversation;
  /** Newest first. */
  messages: Message[];
  participants: User[];
  user: User & { userKey: string };
}

export interface Signal {
  type: string;
  data: Record<string, unknown>;
}

/** The webchat's `apiUrl` of a server: what `<Webchat apiUrl>` is given. */
export const webchatApiUrl = (t: TestServer) => `${t.url}/webchat`;

/** A bot's webchat client id, as getBot shows it. */
export async function webchatClientId(t: TestServer, botId: string): Promise<string> {
  // A field of Parley's (the official client's types do not list it): Parley's own client has it.
  const { bot } = await parleyAdmin(t).getBot({ id: botId });
  const clientId = bot.integrations.chat?.webchatClientId;
  assert.ok(typeof clientId === 'string', 'getBot shows the chat channel’s webchatClientId');
  return clientId;
}

const SIGNALS = [
  'init',
  'message_created',
  'message_updated',
  'message_status_changed',
  'participant_added',
  'participant_removed',
  'custom',
  'typing_started',
  'typing_stopped',
] as const;

/** A webchat as a page opens it: `/initialize`, then the signals of its conversation. */
export class WebchatVisitor {
  private constructor(
    private readonly subscription: Subscription,
    /** Every signal received, `init` first, in order. */
    readonly signals: Signal[],
    readonly errors: unknown[],
    readonly init: InitData,
    readonly client: Client,
  ) {}

  /** Opens the webchat (as a first visit, or as a reload with the stored key and conversation). */
  static async open(
    apiUrl: string,
    clientId: string,
    stored: { userKey?: string; conversationId?: string } = {},
  ): Promise<WebchatVisitor> {
    const subscription = initialize({
      clientId,
      apiUrl,
      ...(stored.userKey !== undefined && { userToken: stored.userKey }),
      ...(stored.conversationId !== undefined && { conversationId: stored.conversationId }),
    });
    const signals: Signal[] = [];
    const errors: unknown[] = [];
    for (const type of SIGNALS) {
      subscription.on(type, (data: unknown) => signals.push({ type, data: data as Record<string, unknown> }));
    }
    subscription.on('error', (err: unknown) => errors.push(err));
    const deadline = Date.now() + 10_000;
    let init: Signal | undefined;
    while (!(init = signals.find((s) => s.type === 'init'))) {
      if (Date.now() > deadline) {
        subscription.disconnect();
        assert.fail(`no init frame in 10 s (errors: ${errors.length})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const data = init.data as unknown as InitData;
    const client = createClient({ userKey: data.user.userKey, clientId, apiUrl });
    return new WebchatVisitor(subscription, signals, errors, data, client);
  }

  get userKey(): string {
    return this.init.user.userKey;
  }

  get userId(): string {
    return this.init.user.id;
  }

  get conversationId(): string {
    return this.init.conversation.id;
  }

  async say(text: string, clientMessageId = `cm-${Math.random().toString(36).slice(2)}`) {
    const { message } = await this.client.createMessage({
      conversationId: this.conversationId,
      payload: { type: 'text', text },
      metadata: { clientMessageId },
    });
    return message;
  }

  /** The messages the stream brought, in order (the user's own and the bot's). */
  messages(): Record<string, unknown>[] {
    return this.signals.filter((s) => s.type === 'message_created').map((s) => s.data);
  }

  /** The bot's messages the stream brought (those not of this user), in order. */
  botMessages(): Record<string, unknown>[] {
    return this.messages().filter((m) => m.userId !== this.userId);
  }

  /** Waits until `count` bot messages have arrived; answers their payloads. */
  async botPayloads(count: number, ms = 15_000): Promise<Record<string, unknown>[]> {
    await this.waitUntil(`${count} bot messages`, () => this.botMessages().length >= count, ms);
    return this.botMessages().map((m) => m.payload as Record<string, unknown>);
  }

  async botTexts(count: number, ms?: number): Promise<string[]> {
    return (await this.botPayloads(count, ms)).map((p) =>
      typeof p.text === 'string' ? p.text : JSON.stringify(p),
    );
  }

  async waitUntil(what: string, check: () => boolean, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) {
        assert.fail(
          `timed out after ${ms} ms waiting for ${what}; signals: ${JSON.stringify(this.signals).slice(0, 2000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.subscription.disconnect();
  }
}
