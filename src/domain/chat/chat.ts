import { createHmac, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import type { AdmissionEntry } from '../queue/admission.ts';
import type { Caches } from '../shared/caches.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { ChatChannel, ChatChannels, ReachedChannel } from './channels.ts';
import {
  CHAT_CUSTOM_EVENT,
  customEventForBot,
  eventPayloadForChat,
  messageForBot,
  messageForChat,
} from './bot-format.ts';
import { CHAT_INTEGRATION } from './channels.ts';
import { validateForeignId } from './foreign-ids.ts';
import type { ForeignIds } from './foreign-ids.ts';
import type { Conversations } from '../runtime/conversations.ts';
import { ApiError, forbidden, invalidPayload, notFound, unauthorized } from '../shared/errors.ts';
import type { Events } from '../runtime/events.ts';
import type { ConversationLog } from '../live/conversation-log.ts';
import type { Messages } from '../runtime/messages.ts';
import type { PageRequest } from '../shared/pagination.ts';
import type { JsonObject } from '../shared/schemas.ts';
import type { Users } from '../runtime/users.ts';
import type { User } from '../runtime/schemas.ts';
import type { ChatUser, ChatConversation, ChatMessage, ChatEvent, ChatUserFields } from './schemas.ts';

const NOT_A_PARTICIPANT = 'You are not a participant of this conversation';

/** The runtime channel of conversations opened through the Chat API. */
export const CHAT_CHANNEL = 'channel';
/** Who owns a chat conversation: the runtime tag, namespaced by the integration. */
export const OWNER_TAG = `${CHAT_INTEGRATION}:owner`;
/** Where a chat user's profile text is kept among the runtime user's properties. */
const PROFILE_PROPERTY = `${CHAT_INTEGRATION}:profile`;

/** A channel reached through its webhook id, acting as its bot. */
export interface ChatScope {
  channel: ReachedChannel;
  bot: BotActor;
}

/** Someone who reached a channel, with the user key they presented (if any). */
export interface ChatVisitor extends ChatScope {
  key: string | undefined;
}

/**
 * An end user of a channel whose key is verified, for a request that queues a turn (`Chat.admit`): its
 * user is read with the turn's conversation, in one statement (`turnParticipant`).
 */
export interface ChatKeySession extends ChatScope {
  foreignUserId: string;
  /**
   * What admission let in before anything was read, for the turn the request queues: its caller leaves
   * it when the request ends, if the turn's insert has not.
   */
  entry?: AdmissionEntry;
}

/** An authenticated end user of a channel: the user the key names exists. */
export interface ChatSession extends ChatKeySession {
  userId: string;
}

interface Services {
  store: Store;
  caches: Caches;
  channels: ChatChannels;
  ids: ForeignIds;
  users: Users;
  conversations: Conversations;
  messages: Messages;
  events: Events;
  log: ConversationLog;
}

const keyEncoder = new TextEncoder();
/** Channels' signing keys kept imported at once (more than any server has channels in use). */
const IMPORTED_KEYS = 10_000;
/** How long a verified chat key is taken at its word (the secret it was checked with names the entry). */
const VERIFIED_KEY_MS = 10 * 60_000;

/** The secret a channel's keys are signed with, by name: the channel's own key, or the server's for it. */
function secretName(channel: ChatChannel): string {
  return channel.encryptionKey ? `personal:${channel.encryptionKey}` : `shared:${channel.botId}`;
}

/**
 * The Chat API's rules, on top of the runtime records: end users identified by HS256 keys `{ id }`,
 * ids of the clients' choosing mapped to Parley's, conversations owned by their creator, and
 * participants the only ones who read and write them.
 */
/** On every chat message: the conversation a client-chosen id names, and whether the user takes part in it. */
const participantConversation = prepare(
  ['botId', 'userId', 'foreignId'],
  (db, { botId, userId, foreignId }: { botId: string; userId: string; foreignId: string }) =>
    db
      .selectFrom('chat_ids as c')
      .leftJoin('participants as p', (join) =>
        join.onRef('p.conversation_id', '=', 'c.internal_id').on('p.user_id', '=', userId),
      )
      .select(['c.internal_id', 'p.user_id'])
      .where('c.bot_id', '=', botId)
      .where('c.kind', '=', 'conversation')
      .where('c.foreign_id', '=', foreignId),
);

/**
 * On every message or event a channel queues: the user a key names, the conversation a client-chosen id
 * names, and whether that user takes part in it, where `participantConversation` needed the user's read
 * first. No row: the user does not exist.
 */
const turnParticipant = prepare(
  ['botId', 'foreignUserId', 'foreignId'],
  (db, { botId, foreignUserId, foreignId }: { botId: string; foreignUserId: string; foreignId: string }) =>
    db
      .selectFrom('chat_ids as u')
      .leftJoin('chat_ids as c', (join) =>
        join
          .onRef('c.bot_id', '=', 'u.bot_id')
          .on('c.kind', '=', 'conversation')
          .on('c.foreign_id', '=', foreignId),
      )
      .leftJoin('participants as p', (join) =>
        join.onRef('p.conversation_id', '=', 'c.internal_id').onRef('p.user_id', '=', 'u.internal_id'),
      )
      .select(['u.internal_id as user_internal_id', 'c.internal_id', 'p.user_id'])
      .where('u.bot_id', '=', botId)
      .where('u.kind', '=', 'user')
      .where('u.foreign_id', '=', foreignUserId),
);

/** `participantConversation`, and where the conversation's signals stand: a listener starts there. */
const listenableConversation = prepare(
  ['botId', 'userId', 'foreignId'],
  (db, { botId, userId, foreignId }: { botId: string; userId: string; foreignId: string }) =>
    db
      .selectFrom('chat_ids as c')
      .innerJoin('conversations as v', 'v.id', 'c.internal_id')
      .leftJoin('participants as p', (join) =>
        join.onRef('p.conversation_id', '=', 'c.internal_id').on('p.user_id', '=', userId),
      )
      .select(['c.internal_id', 'p.user_id', 'v.signal_seq'])
      .where('c.bot_id', '=', botId)
      .where('c.kind', '=', 'conversation')
      .where('c.foreign_id', '=', foreignId),
);

/** A verified key whose user does not exist (or no longer does). */
function unknownUser(foreignUserId: string): ApiError {
  return unauthorized(`The user "${foreignUserId}" of this key does not exist: call getOrCreateUser first`);
}

/** The row of a conversation the user takes part in: refused when there is none, or the user is not in it. */
function participantRow<R extends { user_id: string | null }>(row: R | undefined, foreignId: string): R {
  if (!row) throw notFound('Conversation', foreignId);
  if (row.user_id === null) throw forbidden(NOT_A_PARTICIPANT);
  return row;
}

/** A conversation a user may listen to: Parley's id, and the number of its last signal when the request came. */
export interface ListenableConversation {
  conversationId: string;
  position: number;
}

export class Chat {
  private sharedSecret: Promise<string> | undefined;
  /** The channels' signing keys, by their secret: see `secretOf`. */
  private readonly keys = new Map<string, Promise<webcrypto.CryptoKey>>();

  constructor(
    private readonly s: Services,
    private readonly configuredSecret: string | undefined,
  ) {}

  /** The channel of a webhook id; an unknown or disabled one is not found. */
  async scope(webhookId: string): Promise<ChatScope> {
    const channel = await this.s.channels.byWebhook(webhookId);
    if (!channel || !channel.enabled) throw notFound('Chat channel', webhookId);
    return { channel, bot: { botId: channel.botId, workspaceId: channel.workspaceId } };
  }

  // Users and keys

  /** Shared mode only: the server signs the new user's key. */
  async createUser(
    scope: ChatScope,
    body: ChatUserFields & { id?: string },
  ): Promise<{ user: ChatUser; key: string }> {
    if (scope.channel.encryptionKey) {
      throw unauthorized(
        'This channel signs its own user keys (personal mode): use getOrCreateUser with your key',
      );
    }
    const foreignId = body.id ?? this.s.ids.generate();
    if (body.id !== undefined) validateForeignId(body.id, 'user');
    const user = await this.insertUser(scope, foreignId, body);
    return { user, key: await this.sign(scope.channel, foreignId) };
  }

  /** The user a key names: created on first use (personal mode, or a shared key whose user is gone). */
  async getOrCreateUser(scope: ChatScope, key: string | undefined, body: ChatUserFields): Promise<ChatUser> {
    const foreignId = await this.verify(scope.channel, key);
    const existing = await this.s.ids.internalOf(this.s.store.db, scope.bot.botId, 'user', foreignId);
    if (existing) return this.view(await this.s.users.get(scope.bot, existing), foreignId);
    validateForeignId(foreignId, 'user');
    try {
      return await this.insertUser(scope, foreignId, body);
    } catch (err) {
      // Two first uses of one key at once: the other created the user.
      if (err instanceof ApiError && err.type === 'AlreadyExists') {
        const id = await this.s.ids.internalOf(this.s.store.db, scope.bot.botId, 'user', foreignId);
        if (id) return this.view(await this.s.users.get(scope.bot, id), foreignId);
      }
      throw err;
    }
  }

  /** The user a key names: a key whose user does not exist is refused (401). */
  async authenticate(scope: ChatScope, key: string | undefined): Promise<ChatSession> {
    const foreignUserId = await this.verify(scope.channel, key);
    const userId = await this.s.ids.internalOf(this.s.store.db, scope.bot.botId, 'user', foreignUserId);
    if (!userId) throw unknownUser(foreignUserId);
    return { ...scope, userId, foreignUserId };
  }

  /**
   * For a request that queues a turn: admission decides once the key's signature is checked (no
   * statement), and its user is read later with the turn's conversation (`createMessage`,
   * `createEvent`). Past capacity the refusal (`RetryLater`) then costs no connection, which on
   * PostgreSQL the admitted turns wait for; a refused key naming no user is told 429, not 401: it
   * learns nothing more.
   */
  async admit(scope: ChatScope, key: string | undefined): Promise<ChatKeySession> {
    const foreignUserId = await this.verify(scope.channel, key);
    return { ...scope, foreignUserId, entry: this.s.events.enter(scope.bot) };
  }

  /**
   * A new key for a user, for a site's backend that signs in its own users; `expiresAt` (Unix time, in
   * seconds or milliseconds) ends it. Shared mode: a user the channel knows. Personal mode: any id, the
   * user is created on first use, as with keys the site signs itself.
   */
  async issueKey(scope: ChatScope, foreignUserId: string, expiresAt?: number): Promise<string> {
    validateForeignId(foreignUserId, 'user');
    if (!scope.channel.encryptionKey) {
      const id = await this.s.ids.internalOf(this.s.store.db, scope.bot.botId, 'user', foreignUserId);
      if (!id) throw notFound('User', foreignUserId);
    }
    return this.sign(scope.channel, foreignUserId, expiresAt);
  }

  async getUser(session: ChatSession): Promise<ChatUser> {
    return this.view(await this.s.users.get(session.bot, session.userId), session.foreignUserId);
  }

  async updateUser(session: ChatSession, body: ChatUserFields): Promise<ChatUser> {
    const user = await this.s.users.update(session.bot, session.userId, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.pictureUrl !== undefined && { pictureUrl: body.pictureUrl }),
      ...(body.profile !== undefined && { properties: { [PROFILE_PROPERTY]: body.profile } }),
    });
    return this.view(user, session.foreignUserId);
  }

  async deleteUser(session: ChatSession): Promise<void> {
    await this.s.users.delete(session.bot, session.userId);
    await this.s.ids.forget(this.s.store.db, [session.userId]);
  }

  // Conversations

  async createConversation(session: ChatSession, foreignId: string | undefined): Promise<ChatConversation> {
    if (foreignId !== undefined) validateForeignId(foreignId, 'conversation');
    const id = foreignId ?? this.s.ids.generate();
    const { conversation, signal } = await this.s.store.db.transaction().execute(async (trx) => {
      const created = await this.s.conversations.create(
        { ...session.bot, integration: CHAT_INTEGRATION },
        { channel: CHAT_CHANNEL, tags: { [OWNER_TAG]: session.userId } },
        trx,
      );
      await this.s.ids.assign(trx, session.bot.botId, 'conversation', id, created.id);
      const joined = await this.s.conversations.ensureParticipant(created.id, session.userId, trx);
      return { conversation: created, signal: joined };
    });
    if (signal) this.s.log.publish([signal]);
    return { id, createdAt: conversation.createdAt, updatedAt: conversation.updatedAt };
  }

  /** An existing conversation must be one the user takes part in. */
  async getOrCreateConversation(session: ChatSession, foreignId: string): Promise<ChatConversation> {
    validateForeignId(foreignId, 'conversation');
    const existing = await this.s.ids.internalOf(
      this.s.store.db,
      session.bot.botId,
      'conversation',
      foreignId,
    );
    if (existing) return this.getConversation(session, foreignId);
    try {
      return await this.createConversation(session, foreignId);
    } catch (err) {
      if (err instanceof ApiError && err.type === 'AlreadyExists')
        return this.getConversation(session, foreignId);
      throw err;
    }
  }

  async getConversation(session: ChatSession, foreignId: string): Promise<ChatConversation> {
    const id = await this.participantConversation(session, foreignId);
    const conversation = await this.s.conversations.get(session.bot, id);
    return { id: foreignId, createdAt: conversation.createdAt, updatedAt: conversation.updatedAt };
  }

  async deleteConversation(session: ChatSession, foreignId: string): Promise<void> {
    const id = await this.ownedConversation(session, foreignId);
    await this.s.conversations.delete(session.bot, id);
    await this.s.ids.forget(this.s.store.db, [id]);
  }

  /** The conversations the user owns, most recent first. */
  async listConversations(
    session: ChatSession,
    request: PageRequest,
  ): Promise<{ items: ChatConversation[]; nextToken?: string }> {
    const page = await this.s.conversations.list(session.bot, {
      ...request,
      tags: { [OWNER_TAG]: session.userId },
      channel: CHAT_CHANNEL,
    });
    const foreign = await this.s.ids.foreignOfMany(
      this.s.store.db,
      page.items.map((c) => c.id),
    );
    return {
      items: page.items.map((c) => ({
        id: foreign.get(c.id) ?? c.id,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt,
      })),
      ...(page.nextToken && { nextToken: page.nextToken }),
    };
  }

  /** For a live listener: the conversation's own id, once the user is known to take part in it. */
  /**
   * Read with the participant check, before the stream opens (a WebSocket's upgrade takes a round trip):
   * a message the client sent just before it listened, or while it did, is still delivered.
   */
  async listenable(session: ChatSession, foreignId: string): Promise<ListenableConversation> {
    const { rows } = await listenableConversation.execute(this.s.store.db, {
      botId: session.bot.botId,
      userId: session.userId,
      foreignId,
    });
    const row = participantRow(rows[0], foreignId);
    return { conversationId: row.internal_id, position: Number(row.signal_seq) };
  }

  // Participants

  async addParticipant(
    session: ChatSession,
    foreignConversationId: string,
    foreignUserId: string,
  ): Promise<ChatUser> {
    const conversationId = await this.ownedConversation(session, foreignConversationId);
    const userId = await this.userOf(session, foreignUserId);
    const user = await this.s.conversations.addParticipant(session.bot, conversationId, userId);
    return this.view(user, foreignUserId);
  }

  async getParticipant(
    session: ChatSession,
    foreignConversationId: string,
    foreignUserId: string,
  ): Promise<ChatUser> {
    const conversationId = await this.participantConversation(session, foreignConversationId);
    const userId = await this.userOf(session, foreignUserId);
    return this.view(
      await this.s.conversations.getParticipant(session.bot, conversationId, userId),
      foreignUserId,
    );
  }

  async removeParticipant(
    session: ChatSession,
    foreignConversationId: string,
    foreignUserId: string,
  ): Promise<void> {
    const conversationId = await this.ownedConversation(session, foreignConversationId);
    const userId = await this.userOf(session, foreignUserId);
    if (userId === session.userId)
      throw invalidPayload('The owner of a conversation cannot remove themselves from it');
    await this.s.conversations.removeParticipant(session.bot, conversationId, userId);
  }

  async listParticipants(
    session: ChatSession,
    foreignConversationId: string,
    request: PageRequest,
  ): Promise<{ items: ChatUser[]; nextToken?: string }> {
    const conversationId = await this.participantConversation(session, foreignConversationId);
    const page = await this.s.conversations.listParticipants(session.bot, conversationId, request);
    const foreign = await this.s.ids.foreignOfMany(
      this.s.store.db,
      page.items.map((u) => u.id),
    );
    return {
      items: page.items.map((u) => this.view(u, foreign.get(u.id) ?? u.id)),
      ...(page.nextToken && { nextToken: page.nextToken }),
    };
  }

  // Messages and events

  async createMessage(
    session: ChatKeySession,
    foreignConversationId: string,
    payload: { type: string } & JsonObject,
    metadata: JsonObject | undefined,
  ): Promise<ChatMessage> {
    // Admission decides before the user's and participant's read waits for a connection: refused, it
    // costs none.
    const message = await this.s.events.entering(
      session.bot,
      async (entry) => {
        const { conversationId, userId } = await this.turnParticipant(session, foreignConversationId);
        const { type, payload: content } = messageForBot({ payload, ...(metadata && { metadata }) });
        return this.s.messages.create(
          session.bot,
          { conversationId, userId, type, payload: content, tags: {} },
          { participant: true, ...(entry && { entry }) },
        );
      },
      session.entry,
    );
    return {
      id: message.id,
      createdAt: message.createdAt,
      payload,
      userId: session.foreignUserId,
      conversationId: foreignConversationId,
      ...(metadata && { metadata }),
    };
  }

  async listMessages(
    session: ChatSession,
    foreignConversationId: string,
    request: PageRequest,
  ): Promise<{ items: ChatMessage[]; nextToken?: string }> {
    const conversationId = await this.participantConversation(session, foreignConversationId);
    const page = await this.s.messages.list(session.bot, { ...request, conversationId });
    const items = await Promise.all(page.items.map((m) => this.messageView(session, m.id)));
    return { items, ...(page.nextToken && { nextToken: page.nextToken }) };
  }

  async getMessage(session: ChatSession, messageId: string): Promise<ChatMessage> {
    const row = await this.s.messages.row(session.bot, messageId);
    await this.requireParticipant(session, row.conversation_id);
    return this.messageView(session, messageId);
  }

  async deleteMessage(session: ChatSession, messageId: string): Promise<void> {
    const row = await this.s.messages.row(session.bot, messageId);
    await this.requireParticipant(session, row.conversation_id);
    if (row.user_id !== session.userId) throw forbidden('Only the sender of a message can delete it');
    await this.s.messages.delete(session.bot, messageId);
  }

  /** A custom event for the bot: it receives `chat:custom` with who sent it and where (see bot-format.ts). */
  async createEvent(
    session: ChatKeySession,
    foreignConversationId: string,
    payload: JsonObject,
  ): Promise<ChatEvent> {
    // Decided by admission before its reads, as a message is (`createMessage`).
    const event = await this.s.events.entering(
      session.bot,
      async (entry) => {
        const { conversationId, userId } = await this.turnParticipant(session, foreignConversationId);
        return this.s.events.createFrom(
          session.bot,
          {
            type: CHAT_CUSTOM_EVENT,
            payload: customEventForBot(userId, conversationId, payload),
            conversationId,
            userId,
            isBot: false,
          },
          entry,
        );
      },
      session.entry,
    );
    return {
      id: event.id,
      createdAt: event.createdAt,
      payload,
      conversationId: foreignConversationId,
      userId: session.foreignUserId,
    };
  }

  async getEvent(session: ChatSession, eventId: string): Promise<ChatEvent> {
    const event = await this.s.events.get(session.bot, eventId);
    if (!event.conversationId) throw notFound('Event', eventId);
    await this.requireParticipant(session, event.conversationId);
    const foreign = await this.s.ids.foreignOfMany(this.s.store.db, [
      event.conversationId,
      event.userId ?? '',
    ]);
    return {
      id: event.id,
      createdAt: event.createdAt,
      payload: eventPayloadForChat(event.type, event.payload),
      conversationId: foreign.get(event.conversationId) ?? event.conversationId,
      userId: event.userId ? (foreign.get(event.userId) ?? event.userId) : session.bot.botId,
    };
  }

  // Internals

  private async insertUser(scope: ChatScope, foreignId: string, body: ChatUserFields): Promise<ChatUser> {
    const user = await this.s.store.db.transaction().execute(async (trx) => {
      const created = await this.s.users.create(
        scope.bot,
        {
          tags: {},
          ...(body.name !== undefined && { name: body.name }),
          ...(body.pictureUrl !== undefined && { pictureUrl: body.pictureUrl }),
          properties: body.profile !== undefined ? { [PROFILE_PROPERTY]: body.profile } : {},
        },
        trx,
      );
      await this.s.ids.assign(trx, scope.bot.botId, 'user', foreignId, created.id);
      return created;
    });
    return this.view(user, foreignId);
  }

  private view(user: User, foreignId: string): ChatUser {
    const profile = user.properties?.[PROFILE_PROPERTY];
    return {
      id: foreignId,
      ...(user.name !== undefined && { name: user.name }),
      ...(user.pictureUrl !== undefined && { pictureUrl: user.pictureUrl }),
      ...(profile !== undefined && { profile }),
      createdAt: user.createdAt,
      updatedAt: user.updatedAt,
    };
  }

  private async messageView(session: ChatSession, messageId: string): Promise<ChatMessage> {
    const row = await this.s.messages.row(session.bot, messageId);
    const foreign = await this.s.ids.foreignOfMany(this.s.store.db, [row.conversation_id, row.user_id]);
    return {
      id: row.id,
      createdAt: row.created_at,
      ...messageForChat({ type: row.type, payload: JSON.parse(row.payload) as JsonObject }),
      userId: foreign.get(row.user_id) ?? row.user_id,
      conversationId: foreign.get(row.conversation_id) ?? row.conversation_id,
    };
  }

  private async conversationOf(session: ChatSession, foreignId: string): Promise<string> {
    const id = await this.s.ids.internalOf(this.s.store.db, session.bot.botId, 'conversation', foreignId);
    if (!id) throw notFound('Conversation', foreignId);
    return id;
  }

  /** The conversation a foreign id names, if the user takes part in it: one query, on every message. */
  private async participantConversation(session: ChatSession, foreignId: string): Promise<string> {
    const { rows } = await participantConversation.execute(this.s.store.db, {
      botId: session.bot.botId,
      userId: session.userId,
      foreignId,
    });
    return participantRow(rows[0], foreignId).internal_id;
  }

  /**
   * The user of a verified key and the conversation a foreign id names, if that user takes part in it:
   * one query, on every message or event a channel queues. Refused as `authenticate` and
   * `participantConversation` would refuse them, in that order.
   */
  private async turnParticipant(
    session: ChatKeySession,
    foreignId: string,
  ): Promise<{ userId: string; conversationId: string }> {
    const { rows } = await turnParticipant.execute(this.s.store.db, {
      botId: session.bot.botId,
      foreignUserId: session.foreignUserId,
      foreignId,
    });
    const row = rows[0];
    if (!row) throw unknownUser(session.foreignUserId);
    if (row.internal_id === null) throw notFound('Conversation', foreignId);
    if (row.user_id === null) throw forbidden(NOT_A_PARTICIPANT);
    return { userId: row.user_internal_id, conversationId: row.internal_id };
  }

  private async ownedConversation(session: ChatSession, foreignId: string): Promise<string> {
    const id = await this.conversationOf(session, foreignId);
    const conversation = await this.s.conversations.get(session.bot, id);
    if (conversation.tags[OWNER_TAG] !== session.userId) {
      throw forbidden('Only the owner of the conversation can do this');
    }
    return id;
  }

  private async requireParticipant(session: ChatSession, conversationId: string): Promise<void> {
    if (!(await this.s.conversations.isParticipant(conversationId, session.userId))) {
      throw forbidden(NOT_A_PARTICIPANT);
    }
  }

  private async userOf(session: ChatSession, foreignUserId: string): Promise<string> {
    const id = await this.s.ids.internalOf(this.s.store.db, session.bot.botId, 'user', foreignUserId);
    if (!id) throw notFound('User', foreignUserId);
    return id;
  }

  // Keys: HS256 JWTs `{ id }`, signed with the channel's encryption key (personal mode) or the server's secret.

  /**
   * Personal mode: the channel's own key. Shared mode: a key derived from the server's secret for this
   * channel, so a key one channel issued never opens another channel's user of the same id.
   */
  private secretOf(channel: ChatChannel): Promise<webcrypto.CryptoKey> {
    // Imported once: jose imports raw bytes again on every call, which cost more than the check itself.
    const name = secretName(channel);
    let key = this.keys.get(name);
    if (!key) {
      if (this.keys.size >= IMPORTED_KEYS) this.keys.clear();
      key = this.rawSecretOf(channel).then((raw) =>
        webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
      );
      // A failed import is not kept: the next call tries again.
      key.catch(() => this.keys.delete(name));
      this.keys.set(name, key);
    }
    return key;
  }

  private async rawSecretOf(channel: ChatChannel): Promise<Uint8Array> {
    if (channel.encryptionKey) return keyEncoder.encode(channel.encryptionKey);
    const shared = await (this.sharedSecret ??= this.s.channels.sharedSecret(this.configuredSecret));
    return createHmac('sha256', shared).update(`chat-channel:${channel.botId}`).digest();
  }

  private async sign(channel: ChatChannel, foreignId: string, expiresAt?: number): Promise<string> {
    const jwt = new SignJWT({ id: foreignId }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
    // A time past the year 5000 in seconds is one in milliseconds.
    if (expiresAt !== undefined)
      jwt.setExpirationTime(expiresAt > 1e11 ? Math.floor(expiresAt / 1000) : expiresAt);
    return jwt.sign(await this.secretOf(channel));
  }

  private async verify(channel: ChatChannel, key: string | undefined): Promise<string> {
    if (!key) throw unauthorized('The x-user-key header is required');
    // Named by the secret it is checked with: a new channel key (personal mode) misses at once.
    const cacheKey = `${secretName(channel)}:${key}`;
    const known = this.s.caches.chatKeys.get(cacheKey);
    if (known) return known;
    try {
      const { payload } = await jwtVerify(key, await this.secretOf(channel), { algorithms: ['HS256'] });
      if (typeof payload.id === 'string' && payload.id !== '') {
        // Kept a while (a visitor writes every few seconds), never past the key's own expiry.
        const until = Math.min(Date.now() + VERIFIED_KEY_MS, (payload.exp ?? Infinity) * 1000);
        this.s.caches.chatKeys.set(cacheKey, payload.id, until);
        return payload.id;
      }
    } catch {
      // any failure is the same answer
    }
    throw unauthorized('Invalid user key');
  }
}
