import { isJsonObject } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { CHAT_INTEGRATION } from './channels.ts';

/**
 * How the chat channel's messages and events look to bots, and back, as the hosted chat integration
 * translates them. A chat message is `{ payload: { type, ...content }, metadata? }`; the bot stores and
 * sees `{ type, payload: { ...content, metadata? } }`. A bloc's items are `{ type, ...content }` on the
 * chat's side and `{ type, payload: content }` on the bot's.
 */

/** A message as bots see it: its kind, and its content (the chat's metadata inside). */
export interface BotMessage {
  type: string;
  payload: JsonObject;
}

/** A message as chat clients see it. */
export interface ChatMessageContent {
  payload: { type: string } & JsonObject;
  metadata?: JsonObject;
}

/** The runtime event type of a custom event sent by a chat user. */
export const CHAT_CUSTOM_EVENT = `${CHAT_INTEGRATION}:custom`;

export function messageForBot(chat: ChatMessageContent): BotMessage {
  const { type, ...content } = chat.payload;
  const payload: JsonObject =
    type === 'bloc' && Array.isArray(content.items)
      ? { ...content, items: content.items.map(itemForBot) }
      : content;
  return { type, payload: chat.metadata ? { ...payload, metadata: chat.metadata } : payload };
}

export function messageForChat(bot: BotMessage): ChatMessageContent {
  const { metadata, ...content } = bot.payload;
  const items = Array.isArray(content.items) ? content.items : undefined;
  const payload =
    bot.type === 'bloc' && items
      ? { ...content, type: bot.type, items: items.map(itemForChat) }
      : bot.type === 'carousel' && items
        ? { ...content, type: bot.type, items: items.map(cardForChat) }
        : { ...content, type: bot.type };
  return isJsonObject(metadata) ? { payload, metadata } : { payload };
}

/** A bot's carousel card has no `type`; the chat's schema requires `type: 'card'` on each. */
function cardForChat(card: Json): Json {
  return isJsonObject(card) && card.type === undefined ? { type: 'card', ...card } : card;
}

function itemForBot(item: Json): Json {
  if (!isJsonObject(item) || typeof item.type !== 'string') return item;
  const { type, ...content } = item;
  return { type, payload: content };
}

/** A bot's item `{ type, payload }`; anything else (an item already in the chat's shape) stays as it is. */
function itemForChat(item: Json): Json {
  if (!isJsonObject(item) || typeof item.type !== 'string' || !isJsonObject(item.payload)) return item;
  return { ...item.payload, type: item.type };
}

/** What the bot receives for a chat user's custom event: who sent it, where, and what (Parley's ids). */
export function customEventForBot(userId: string, conversationId: string, payload: JsonObject): JsonObject {
  return { userId, conversationId, payload };
}

/** The payload chat clients see of an event the bot stored: a custom event's own payload, unwrapped. */
export function eventPayloadForChat(type: string, payload: JsonObject): JsonObject {
  return type === CHAT_CUSTOM_EVENT && isJsonObject(payload.payload) ? payload.payload : payload;
}
