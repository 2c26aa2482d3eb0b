import { messageForBot } from '../chat/bot-format.ts';
import type { JsonObject } from '../shared/json.ts';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Store } from '../../store/index.ts';
import type { Chat, ChatKeySession, ChatScope, ChatSession, ListenableConversation } from '../chat/chat.ts';
import type { ForeignIds } from '../chat/foreign-ids.ts';
import type { ConversationLog, RecordedSignal } from '../live/conversation-log.ts';
import type { Events } from '../runtime/events.ts';
import type { Messages } from '../runtime/messages.ts';
import type { Users } from '../runtime/users.ts';
import { ApiError, forbidden, invalidPayload, unauthorized, unlessMissing } from '../shared/errors.ts';
import type { PageRequest } from '../shared/pagination.ts';
import { claimTag, loadTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type {
  CreateFileBody,
  Feedback,
  FeedbackValue,
  WebchatConversation,
  WebchatEvent,
  WebchatFile,
  WebchatInit,
  WebchatMessage,
  WebchatPayload,
  WebchatUser,
} from './models.ts';
import { FEEDBACK_VALUES } from './models.ts';
import type { User } from '../runtime/schemas.ts';
import type { ChatConversation, ChatMessage, ChatUser } from '../chat/schemas.ts';

/** Someone who reached a webchat: its user key and admin secret, when they sent them. */
export interface WebchatVisitor extends ChatScope {
  key: string | undefined;
  adminSecret: string | undefined;
}

/** Where a webchat user's `data` is kept among the runtime user's properties (as JSON). */
const DATA_PROPERTY = 'webchat:data';
/** Message tags that hold the feedback a webchat user gave a message (visible on the Runtime API). */
export const FEEDBACK_TAG = 'webchat:feedback';
export const FEEDBACK_COMMENT_TAG = 'webchat:feedbackComment';
/** The conversation tag a webchat's first start sets (to its time): the claim that tells the bot once. */
export const STARTED_TAG = 'webchat:started';
/** The bot event of a conversation a webchat opened, once per conversation. */
export const CONVERSATION_STARTED_EVENT = 'webchat:conversationStarted';
/** How many of a conversation's messages `/initialize` shows (the newest). */
export const INIT_HISTORY = 50;

/**
 * Where the webchat's uploads go: the Files API's `upsertFile` for the bot, answering a browser-PUT-able
 * upload URL and a public download URL. Undefined until the Files API is there.
 */
export interface WebchatFiles {
  upsertFile(bot: ChatScope['bot'], body: CreateFileBody): Promise<WebchatFile>;
}

interface Services {
  store: Store;
  chat: Chat;
  ids: ForeignIds;
  users: Users;
  messages: Messages;
  events: Events;
  log: ConversationLog;
  files?: WebchatFiles;
}

export interface UserFields {
  name?: string;
  pictureUrl?: string;
  userData?: JsonObject | string | null;
  attributes?: Record<string, string | null> | string;
}

/**
 * The webchat API's rules: the Chat API's users, keys, conversations and messages (the same records:
 * a conversation opened in a webchat is one of the Chat and Runtime APIs), seen as the official webchat
 * expects them. What only the webchat has is here: the user's data, opening a conversation in one call
 * (`/initialize`), feedback on messages, the once-per-conversation start event, and its live signals.
 */
export class Webchat {
  constructor(private readonly s: Services) {}

  /** The channel of a webchat client id: the chat channel whose webhook id it is. */
  scope(clientId: string): Promise<ChatScope> {
    return this.s.chat.scope(clientId);
  }

  // Users and keys

  /**
   * A new user and its key. Shared mode: anyone. Personal mode (the channel signs its keys with its
   * encryption key): only with that key as `x-admin-secret`, i.e. from the site's backend.
   */
  async createUser(visitor: WebchatVisitor, body: UserFields): Promise<{ user: WebchatUser; key: string }> {
    const trusted = this.checkAdminSecret(visitor, false);
    let key: string;
    let session: ChatSession;
    if (visitor.channel.encryptionKey) {
      if (!trusted) {
        throw unauthorized(
          'This channel signs its own user keys (personal mode): create users with its encryption key as x-admin-secret',
        );
      }
      key = await this.s.chat.issueKey(visitor, randomUUID());
      await this.s.chat.getOrCreateUser(visitor, key, profileOf(body));
      session = await this.s.chat.authenticate(visitor, key);
    } else {
      ({ key } = await this.s.chat.createUser(visitor, profileOf(body)));
      session = await this.s.chat.authenticate(visitor, key);
    }
    const user = await this.saveUserData(session, body);
    return { user: this.userView(user, session.foreignUserId), key };
  }

  /** A key for a user of the channel, minted by the site's backend with the admin secret. */
  async generateUserKey(visitor: WebchatVisitor, userId: string, expiresAt?: number): Promise<string> {
    this.requireAdminSecret(visitor);
    return this.s.chat.issueKey(visitor, userId, expiresAt);
  }

  /** The routes of a site's backend: `x-admin-secret` must be the channel's (401 otherwise). */
  requireAdminSecret(visitor: WebchatVisitor): void {
    this.checkAdminSecret(visitor, true);
  }

  authenticate(scope: ChatScope, key: string | undefined): Promise<ChatSession> {
    return this.s.chat.authenticate(scope, key);
  }

  /** For a request that queues a turn: see `Chat.admit`. */
  admit(scope: ChatScope, key: string | undefined): Promise<ChatKeySession> {
    return this.s.chat.admit(scope, key);
  }

  async getUser(session: ChatSession): Promise<WebchatUser> {
    return this.userView(await this.s.users.get(session.bot, session.userId), session.foreignUserId);
  }

  async updateUser(session: ChatSession, body: UserFields): Promise<WebchatUser> {
    await this.s.chat.updateUser(session, profileOf(body));
    return this.userView(await this.saveUserData(session, body), session.foreignUserId);
  }

  // Opening a conversation

  /**
   * What `/initialize` does in one call: the user of the key (a new one, with a new key, when there is
   * no valid key: the webchat never shows an error before its first frame), the conversation asked for
   * (a new one when it is not the user's), and everything the first frame shows. `after` is where the
   * conversation's live signals stood before the history was read: the stream follows from there, so
   * nothing falls between the two (a message in both is merged by its id).
   */
  async initialize(
    visitor: WebchatVisitor,
    conversationId: string | undefined,
  ): Promise<{ session: ChatSession; init: WebchatInit; runtimeConversationId: string; after: number }> {
    const { session, key } = await this.sessionOf(visitor);
    const conversation = await this.conversationFor(session, conversationId);
    const { conversationId: runtimeConversationId, position: after } = await this.s.chat.listenable(
      session,
      conversation.id,
    );
    const [messages, participants, user] = await Promise.all([
      this.listMessages(session, conversation.id, { pageSize: INIT_HISTORY }),
      this.listParticipants(session, conversation.id, {}),
      this.getUser(session),
    ]);
    return {
      session,
      runtimeConversationId,
      after,
      init: {
        conversation: { ...conversation, ...(messages.items[0] && { lastMessage: messages.items[0] }) },
        messages: messages.items,
        participants: participants.items,
        user: { ...user, userKey: key },
      },
    };
  }

  /** The conversation's own id and signal position, once the user is known to take part in it. */
  listenable(session: ChatSession, conversationId: string): Promise<ListenableConversation> {
    return this.s.chat.listenable(session, conversationId);
  }

  private async sessionOf(visitor: WebchatVisitor): Promise<{ session: ChatSession; key: string }> {
    const { key } = visitor;
    if (key) {
      try {
        // Personal mode: a valid key's user is created on first use.
        if (visitor.channel.encryptionKey) await this.s.chat.getOrCreateUser(visitor, key, {});
        return { session: await this.s.chat.authenticate(visitor, key), key };
      } catch (err) {
        if (!(err instanceof ApiError && err.type === 'Unauthorized')) throw err;
      }
    }
    if (visitor.channel.encryptionKey) {
      throw unauthorized(
        'This channel signs its own user keys (personal mode): give the webchat the user’s key (user.userToken)',
      );
    }
    const created = await this.s.chat.createUser(visitor, {});
    return { session: await this.s.chat.authenticate(visitor, created.key), key: created.key };
  }

  private async conversationFor(session: ChatSession, conversationId: string | undefined) {
    if (conversationId) {
      try {
        return await this.s.chat.getConversation(session, conversationId);
      } catch (err) {
        // Not there any more, or not this user's: the webchat starts a new one.
        const lost = err instanceof ApiError && (err.type === 'ResourceNotFound' || err.type === 'Forbidden');
        if (!lost) throw err;
      }
    }
    return this.s.chat.createConversation(session, undefined);
  }

  // Conversations

  async createConversation(session: ChatSession): Promise<WebchatConversation> {
    return this.s.chat.createConversation(session, undefined);
  }

  async getConversation(session: ChatSession, conversationId: string): Promise<WebchatConversation> {
    return this.withLastMessage(session, await this.s.chat.getConversation(session, conversationId));
  }

  /** The user's conversations, most recent first, each with its last message. */
  async listConversations(
    session: ChatSession,
    request: PageRequest,
  ): Promise<{ items: WebchatConversation[]; nextToken?: string }> {
    const page = await this.s.chat.listConversations(session, request);
    const items = await Promise.all(page.items.map((c) => this.withLastMessage(session, c)));
    return { items, ...(page.nextToken && { nextToken: page.nextToken }) };
  }

  /** A conversation's messages, newest first, with the feedback given on them. */
  async listMessages(
    session: ChatSession,
    conversationId: string,
    request: PageRequest,
  ): Promise<{ items: WebchatMessage[]; nextToken?: string }> {
    const page = await this.s.chat.listMessages(session, conversationId, request);
    return {
      items: await this.messageViews(page.items),
      ...(page.nextToken && { nextToken: page.nextToken }),
    };
  }

  private async withLastMessage(session: ChatSession, c: ChatConversation): Promise<WebchatConversation> {
    const { items } = await this.listMessages(session, c.id, { pageSize: 1 });
    return { ...c, ...(items[0] && { lastMessage: items[0] }) };
  }

  // Participants: their name and picture; the data of another user is theirs.

  async addParticipant(session: ChatSession, conversationId: string, userId: string): Promise<WebchatUser> {
    return participantView(await this.s.chat.addParticipant(session, conversationId, userId));
  }

  async getParticipant(session: ChatSession, conversationId: string, userId: string): Promise<WebchatUser> {
    return participantView(await this.s.chat.getParticipant(session, conversationId, userId));
  }

  removeParticipant(session: ChatSession, conversationId: string, userId: string): Promise<void> {
    return this.s.chat.removeParticipant(session, conversationId, userId);
  }

  async listParticipants(
    session: ChatSession,
    conversationId: string,
    request: PageRequest,
  ): Promise<{ items: WebchatUser[]; nextToken?: string }> {
    const page = await this.s.chat.listParticipants(session, conversationId, request);
    return {
      items: page.items.map((u) => participantView(u)),
      ...(page.nextToken && { nextToken: page.nextToken }),
    };
  }

  // Messages

  /** A message from the user: the Chat API's, so the bot answers it the same way. */
  async createMessage(
    session: ChatKeySession,
    conversationId: string,
    payload: WebchatPayload,
    metadata: JsonObject | undefined,
  ): Promise<WebchatMessage> {
    return this.s.chat.createMessage(session, conversationId, payload, metadata);
  }

  async getMessage(session: ChatSession, messageId: string): Promise<WebchatMessage> {
    const [message] = await this.messageViews([await this.s.chat.getMessage(session, messageId)]);
    return message as WebchatMessage;
  }

  /** The sender changes what its message says (not its kind). */
  async updateMessage(
    session: ChatSession,
    messageId: string,
    payload: WebchatPayload,
  ): Promise<WebchatMessage> {
    const current = await this.s.chat.getMessage(session, messageId);
    if (current.userId !== session.foreignUserId)
      throw forbidden('Only the sender of a message can change it');
    if (payload.type !== current.payload.type) {
      throw invalidPayload(
        `payload.type must stay ${JSON.stringify(current.payload.type)}: a message keeps its kind`,
      );
    }
    // Stored as the bot sees it, keeping the metadata the message came with.
    const { payload: content } = messageForBot({
      payload,
      ...(current.metadata && { metadata: current.metadata }),
    });
    await this.s.messages.update(session.bot, messageId, { payload: content });
    return this.getMessage(session, messageId);
  }

  /**
   * Thumbs up or down (and a comment) on a message of the conversation, kept as the message's tags
   * `webchat:feedback` and `webchat:feedbackComment`, where the bot and its operators read them (for
   * example `listMessages({ tags: { 'webchat:feedback': 'negative' } })`). The last feedback given wins.
   */
  async setFeedback(session: ChatSession, messageId: string, feedback: Feedback | null): Promise<void> {
    await this.s.chat.getMessage(session, messageId);
    await this.s.messages.update(session.bot, messageId, {
      tags: { [FEEDBACK_TAG]: feedback?.value ?? null, [FEEDBACK_COMMENT_TAG]: feedback?.comment ?? null },
    });
  }

  // Events

  /**
   * `conversation_started` (sent after every `/initialize`): the bot's `webchat:conversationStarted`
   * event, once per conversation, and `isInitial` tells the webchat whether this was that once.
   * `custom`: a custom event of the page for the bot, as the Chat API's createEvent sends it.
   */
  async createEvent(
    session: ChatSession,
    conversationId: string,
    payload: { type: 'custom' | 'conversation_started'; data: JsonObject },
  ): Promise<WebchatEvent> {
    if (payload.type === 'custom') {
      const event = await this.s.chat.createEvent(session, conversationId, payload.data);
      return { ...event, payload: { type: 'custom', data: event.payload } };
    }
    const { conversationId: runtimeConversationId } = await this.s.chat.listenable(session, conversationId);
    // The claim comes first: of two starts at once, one fires the bot's event.
    const initial = await claimTag(this.s.store.db, runtimeConversationId, STARTED_TAG, nowIso());
    const event = initial
      ? await this.s.events.createFrom(session.bot, {
          type: CONVERSATION_STARTED_EVENT,
          payload: { conversationId, userId: session.foreignUserId },
          conversationId: runtimeConversationId,
          userId: session.userId,
          isBot: false,
        })
      : await this.startedEvent(session, runtimeConversationId);
    return {
      id: event?.id ?? `${runtimeConversationId}:started`,
      createdAt: event?.createdAt ?? nowIso(),
      payload: { type: 'conversation_started', data: { status: { isInitial: initial } } },
      conversationId,
      userId: session.foreignUserId,
    };
  }

  async getEvent(session: ChatSession, eventId: string): Promise<WebchatEvent> {
    const event = await this.s.chat.getEvent(session, eventId);
    const { type } = await this.s.events.get(session.bot, eventId);
    return {
      ...event,
      payload:
        type === CONVERSATION_STARTED_EVENT
          ? { type: 'conversation_started', data: {} }
          : { type: 'custom', data: event.payload },
    };
  }

  /** The bot's event of the conversation's start (absent only while a concurrent start creates it). */
  private async startedEvent(session: ChatSession, runtimeConversationId: string) {
    const { items } = await this.s.events.list(session.bot, {
      type: CONVERSATION_STARTED_EVENT,
      conversationId: runtimeConversationId,
      pageSize: 1,
    });
    return items[0];
  }

  // Files

  /** Whether the webchat's file uploads have somewhere to go (the Files API). */
  get uploadsAvailable(): boolean {
    return this.s.files !== undefined;
  }

  /** An upload for the conversation, through the Files API: refused clearly until it is there. */
  async createFile(session: ChatSession, body: CreateFileBody): Promise<WebchatFile> {
    if (!this.s.files) {
      throw new ApiError(
        'MethodNotFound',
        'File uploads are not available: this server has no Files API yet. Set allowFileUpload to false in the webchat configuration.',
      );
    }
    return this.s.files.upsertFile(session.bot, {
      ...body,
      tags: { ...body.tags, integrationName: 'webchat', user: session.foreignUserId },
    });
  }

  // Live signals

  private readonly translated = new WeakMap<RecordedSignal, Promise<string[]>>();

  /**
   * The webchat's SSE frames for a recorded signal of the conversation (the Chat API's wire format):
   * the message (without `isBot`: the webchat tells the bot by its user id) and, for the user's own,
   * that it is being processed; the bot's events as `custom` signals; a new participant with its
   * profile. Translated once per signal, whatever the number of listeners.
   */
  framesOf(signal: RecordedSignal, session: ChatSession): Promise<string[]> {
    let frames = this.translated.get(signal);
    if (!frames) {
      frames = this.translate(signal, session.bot);
      this.translated.set(signal, frames);
    }
    return frames;
  }

  private async translate(signal: RecordedSignal, bot: ChatSession['bot']): Promise<string[]> {
    const { type, data } = JSON.parse(signal.frame) as { type: string; data: JsonObject };
    const frame = (signalType: string, signalData: object) =>
      `id: ${signal.seq}\ndata: ${JSON.stringify({ type: signalType, data: signalData })}\n\n`;
    switch (type) {
      case 'message_created': {
        const { isBot, ...message } = data;
        const created = frame('message_created', message);
        return isBot
          ? [created]
          : [created, frame('message_status_changed', { message, newStatus: 'processing' })];
      }
      case 'event_created':
        return data.isBot ? [frame('custom', { event: data.payload })] : [];
      case 'participant_added': {
        const foreignId = typeof data.participantId === 'string' ? data.participantId : '';
        // A user made outside the Chat API (a handoff's agent) has no foreign id: its id is its own.
        const userId =
          (await this.s.ids.internalOf(this.s.store.db, bot.botId, 'user', foreignId)) ?? foreignId;
        const user = userId !== '' && (await unlessMissing(this.s.users.get(bot, userId)));
        if (!user) return [];
        return [
          frame('participant_added', {
            conversationId: data.conversationId,
            participant: participantView(user, foreignId),
          }),
        ];
      }
      case 'participant_removed':
        return [frame('participant_removed', data)];
      default:
        // Deleted messages and anything else the webchat has no signal for.
        return [];
    }
  }

  // Internals

  /** `x-admin-secret`: the channel's encryption key (personal mode). Wrong: 401; absent: false, or 401 if required. */
  private checkAdminSecret(visitor: WebchatVisitor, required: boolean): boolean {
    const secret = visitor.adminSecret;
    const expected = visitor.channel.encryptionKey;
    if (secret === undefined) {
      if (required) throw unauthorized('The x-admin-secret header is required');
      return false;
    }
    if (!expected) {
      throw unauthorized(
        'This channel has no admin secret: give it an encryption key (integrations.chat.configuration.encryptionKey), which is its admin secret',
      );
    }
    const a = Buffer.from(secret);
    const b = Buffer.from(expected);
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw unauthorized('Invalid admin secret');
    return true;
  }

  /** Stores the user's `data` and `attributes` (a signed token instead of an object is not taken). */
  private async saveUserData(session: ChatSession, body: UserFields): Promise<User> {
    if (typeof body.userData === 'string' || typeof body.attributes === 'string') {
      throw invalidPayload('userData and attributes must be objects: signed tokens are not supported');
    }
    if (body.userData === undefined && body.attributes === undefined) {
      return this.s.users.get(session.bot, session.userId);
    }
    return this.s.users.update(session.bot, session.userId, {
      ...(body.userData !== undefined && {
        properties: { [DATA_PROPERTY]: body.userData === null ? null : JSON.stringify(body.userData) },
      }),
      ...(body.attributes !== undefined && { attributes: body.attributes }),
    });
  }

  private userView(user: User, foreignId: string): WebchatUser {
    const data = user.properties?.[DATA_PROPERTY];
    return {
      ...participantView(user, foreignId),
      ...(data !== undefined && { data: JSON.parse(data) as JsonObject }),
      ...(user.attributes && Object.keys(user.attributes).length > 0 && { attributes: user.attributes }),
    };
  }

  /** Chat messages with the feedback their tags hold. */
  private async messageViews(messages: ChatMessage[]): Promise<WebchatMessage[]> {
    const tags = await loadTags(
      this.s.store.db,
      messages.map((m) => m.id),
    );
    return messages.map((m) => {
      const t = tags.get(m.id) ?? {};
      const value = t[FEEDBACK_TAG];
      const comment = t[FEEDBACK_COMMENT_TAG];
      if (!isFeedbackValue(value)) return m;
      return { ...m, feedback: { value, ...(comment !== undefined && { comment }) } };
    });
  }
}

const isFeedbackValue = (value: string | undefined): value is FeedbackValue =>
  value !== undefined && (FEEDBACK_VALUES as readonly string[]).includes(value);

function profileOf(body: UserFields): { name?: string; pictureUrl?: string } {
  return {
    ...(body.name !== undefined && { name: body.name }),
    ...(body.pictureUrl !== undefined && { pictureUrl: body.pictureUrl }),
  };
}

/** What another participant sees of a user: its name and picture (its data is its own). */
function participantView(user: ChatUser | User, foreignId = user.id): WebchatUser {
  return {
    id: foreignId,
    ...(user.name !== undefined && { name: user.name }),
    ...(user.pictureUrl !== undefined && { pictureUrl: user.pictureUrl }),
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}
