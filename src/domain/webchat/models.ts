import { Type } from 'typebox';
import type { Static } from 'typebox';
import { CHAT_PAYLOAD_KINDS, keyedUnion } from '../chat/payloads.ts';
import { AccessPolicySchema } from '../files/schemas.ts';
import { JsonObject, JsonValue, TagMap, Timestamp } from '../shared/schemas.ts';
import { ChatConversationSchema, ChatMessageSchema, ChatUserSchema } from '../chat/schemas.ts';

/**
 * The records as the official webchat (`@botpress/webchat-client` 0.7) reads them: the Chat API's,
 * with the user's `data` and `attributes`, a conversation's last message, and a message's feedback.
 */

/** The payloads a webchat sends and renders: the Chat API's, plus a `custom` component of the page's. */
export const WebchatPayloadSchema = keyedUnion([
  ...CHAT_PAYLOAD_KINDS,
  Type.Object({
    type: Type.Literal('custom'),
    url: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    data: Type.Optional(JsonValue),
  }),
]);
export type WebchatPayload = Static<typeof WebchatPayloadSchema>;

/** A chat user's profile (not its Chat API `profile` text: the webchat has `data` instead). */
const { profile: _profile, ...userProperties } = ChatUserSchema.properties;

export const WebchatUserSchema = Type.Object({
  ...userProperties,
  data: Type.Optional(JsonObject),
  attributes: Type.Optional(TagMap),
});
export type WebchatUser = Static<typeof WebchatUserSchema>;

export const FEEDBACK_VALUES = ['positive', 'negative'] as const;
export type FeedbackValue = (typeof FEEDBACK_VALUES)[number];

export const FeedbackSchema = Type.Object({
  value: Type.Enum(FEEDBACK_VALUES),
  comment: Type.Optional(Type.String({ maxLength: 1000 })),
});
export type Feedback = Static<typeof FeedbackSchema>;

export const WebchatMessageSchema = Type.Object({
  ...ChatMessageSchema.properties,
  feedback: Type.Optional(FeedbackSchema),
});
export type WebchatMessage = Static<typeof WebchatMessageSchema>;

export const WebchatConversationSchema = Type.Object({
  ...ChatConversationSchema.properties,
  lastMessage: Type.Optional(WebchatMessageSchema),
});
export type WebchatConversation = Static<typeof WebchatConversationSchema>;

export const WEBCHAT_EVENT_TYPES = ['custom', 'conversation_started'] as const;
export type WebchatEventType = (typeof WEBCHAT_EVENT_TYPES)[number];

export const WebchatEventSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  payload: Type.Object({ type: Type.Enum(WEBCHAT_EVENT_TYPES), data: JsonObject }),
  conversationId: Type.String(),
  userId: Type.String(),
});
export type WebchatEvent = Static<typeof WebchatEventSchema>;

/** What the webchat asks for to upload a file: the Files API's `upsertFile`, minus what it may not set. */
export const CreateFileBodySchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1000 }),
  size: Type.Integer({ minimum: 0 }),
  accessPolicies: Type.Optional(Type.Array(AccessPolicySchema)),
  index: Type.Optional(Type.Boolean()),
  contentType: Type.Optional(Type.String({ maxLength: 200 })),
  tags: Type.Optional(TagMap),
  expiresAt: Type.Optional(Type.String()),
});
export type CreateFileBody = Static<typeof CreateFileBodySchema>;

export const WebchatFileSchema = Type.Object({
  id: Type.String(),
  botId: Type.String(),
  key: Type.String(),
  size: Type.Union([Type.Number(), Type.Null()]),
  contentType: Type.String(),
  tags: TagMap,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  accessPolicies: Type.Array(AccessPolicySchema),
  index: Type.Boolean(),
  url: Type.String(),
  status: Type.String(),
  failedStatusReason: Type.Optional(Type.String()),
  uploadUrl: Type.String(),
});
export type WebchatFile = Static<typeof WebchatFileSchema>;

/** The first frame of `/initialize`: everything the webchat shows before the live signals. */
export interface WebchatInit {
  conversation: WebchatConversation;
  /** Newest first, as the webchat expects them. */
  messages: WebchatMessage[];
  participants: WebchatUser[];
  user: WebchatUser & { userKey: string };
}
