import { Type } from 'typebox';
import type { Static } from 'typebox';
import { UserName, UserPictureUrl } from '../runtime/schemas.ts';
import { JsonObject, Timestamp } from '../shared/schemas.ts';

// The Chat API's views of the records (a user, a conversation, a message, an event), what a user may
// set of itself, and the ids a client may choose: a module without the store, so the contract declares
// the Chat API with them.

export const ChatUserSchema = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  pictureUrl: Type.Optional(Type.String()),
  profile: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ChatUser = Static<typeof ChatUserSchema>;

export const ChatConversationSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ChatConversation = Static<typeof ChatConversationSchema>;

export const ChatMessageSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  payload: JsonObject,
  userId: Type.String(),
  conversationId: Type.String(),
  metadata: Type.Optional(JsonObject),
});
export type ChatMessage = Static<typeof ChatMessageSchema>;

export const ChatEventSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  payload: JsonObject,
  conversationId: Type.String(),
  userId: Type.String(),
});
export type ChatEvent = Static<typeof ChatEventSchema>;

export const ChatUserFieldsSchema = Type.Object({
  name: Type.Optional(UserName),
  pictureUrl: Type.Optional(UserPictureUrl),
  profile: Type.Optional(Type.String({ maxLength: 1000 })),
});
export type ChatUserFields = Static<typeof ChatUserFieldsSchema>;

/** The longest id a Chat API client may choose, as the hosted chat server accepts. */
export const FOREIGN_ID_MAX_LENGTH = 70;

/** A client-chosen id as the routes take it; its characters are checked where it is used (validateForeignId). */
export const ForeignIdSchema = Type.String({ minLength: 1, maxLength: FOREIGN_ID_MAX_LENGTH });
