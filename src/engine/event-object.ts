import { Type } from 'typebox';
import type { Json, JsonObject } from './sandbox/types.ts';
import type { User, Conversation, Event, Message } from '../domain/runtime/schemas.ts';

/** Where the workflow handling this event was started from, when a trigger node started it. */
export interface TriggerInfo {
  flowId: string;
  nodeId: string;
  eventName?: string;
}

export interface EventSources {
  botId: string;
  event: Event;
  message?: Message;
  conversation?: Conversation;
  user?: User;
  trigger?: TriggerInfo;
  /** Where the conversation's dialog stands (workflow and node), for `event.state`. */
  dialog?: { workflow: string; node: string } | null;
  /** What knowledge cards of this turn found so far (a resumed turn keeps it). */
  kb?: EventKb;
}

/** A passage a knowledge card consulted, as `event.kb.results` and the card's variable hold it. */
export type KnowledgeResult = {
  text: string;
  /** Higher is better; comparable among the results of one search. */
  score: number;
  file: { id: string; key: string; title?: string };
  knowledgeBase: { id: string; name: string };
  pageNumber?: number;
  position?: number;
} & JsonObject;

/** `event.kb`: the knowledge bases queried in this turn, and the passages consulted. */
export type EventKb = { included: { id: string; name: string }[]; results: KnowledgeResult[] } & JsonObject;

const Ref = Type.Object({ id: Type.String(), name: Type.String() });
/** The JSON Schema of `event.kb`, where a dialog state keeps it. */
export const EventKbSchema = Type.Unsafe<EventKb>(
  Type.Object({
    included: Type.Array(Ref),
    results: Type.Array(
      Type.Object({
        text: Type.String(),
        score: Type.Number(),
        file: Type.Object({ id: Type.String(), key: Type.String(), title: Type.Optional(Type.String()) }),
        knowledgeBase: Ref,
        pageNumber: Type.Optional(Type.Integer()),
        position: Type.Optional(Type.Integer()),
      }),
    ),
  }),
);

/** The chat view of a message payload: its type with its content, e.g. `{ type: 'text', text: 'hi' }`. */
export function messagePayload(message: Pick<Message, 'type' | 'payload'>): JsonObject {
  return { type: message.type, ...message.payload };
}

/** The plain text of a payload: the text of a text message, a short form of the others. */
export function previewOf(payload: JsonObject): string {
  const text = (key: string) => (typeof payload[key] === 'string' ? payload[key] : undefined);
  switch (payload.type) {
    case 'text':
    case 'choice':
    case 'dropdown':
      return text('text') ?? '';
    case 'markdown':
      return text('markdown') ?? '';
    case 'image':
      return text('imageUrl') ?? '';
    case 'audio':
      return text('audioUrl') ?? '';
    case 'video':
      return text('videoUrl') ?? '';
    case 'file':
      return text('title') ?? text('fileUrl') ?? '';
    case 'card':
      return text('title') ?? '';
    case 'location':
      return text('address') ?? `${JSON.stringify(payload.latitude)},${JSON.stringify(payload.longitude)}`;
    default:
      return JSON.stringify(payload);
  }
}

/**
 * The members of the `event` object bot code receives, each with what it holds: buildEventObject sets no
 * other, and the console's code editor completes `event.` with these (scripts/build-console.mjs).
 */
export const EVENT_FIELDS = {
  id: 'The event’s id',
  type: 'The event’s type: `message` for a message, else the integration’s or the bot’s event name',
  botId: 'The bot’s id',
  direction: 'Always `incoming`',
  createdOn: 'When the event was created (ISO 8601)',
  payload: 'The message’s payload (`{ type: "text", text }` and the others), or the event’s',
  preview: 'The message’s plain text (a short form of a message that is not text)',
  state: 'Where the dialog stands (`dialog`: its workflow and node, or null) and the event’s status',
  kb: 'The knowledge bases queried in this turn (`included`) and the passages found (`results`)',
  tags: 'The tags of the conversation, the user and the message',
  conversationId: 'The conversation’s id',
  userId: 'The user’s id',
  messageId: 'The message’s id, for a message',
  integration: 'The integration of the conversation (`chat`, `webchat`, …)',
  trigger: 'The trigger node that started the workflow, for a workflow started by a trigger',
} as const;
type EventObject = { -readonly [field in keyof typeof EVENT_FIELDS]?: Json };

/**
 * The `event` object bot code receives (the hosted studio's IncomingEvent): every field of the spec,
 * built from the runtime event and the message, conversation and user it concerns.
 */
export function buildEventObject(sources: EventSources): JsonObject {
  const { event, message, conversation, user, trigger } = sources;
  const payload = message ? messagePayload(message) : event.payload;
  const eventObject: EventObject = {
    id: event.id,
    type: event.type,
    botId: sources.botId,
    direction: 'incoming',
    createdOn: event.createdAt,
    payload,
    preview: previewOf(payload),
    state: { dialog: sources.dialog ?? null, status: event.status },
    kb: sources.kb ?? { included: [], results: [] },
    tags: {
      conversation: conversation?.tags ?? {},
      user: user?.tags ?? {},
      message: message?.tags ?? {},
    },
  };
  if (event.conversationId !== undefined) eventObject.conversationId = event.conversationId;
  if (event.userId !== undefined) eventObject.userId = event.userId;
  if (event.messageId !== undefined) eventObject.messageId = event.messageId;
  if (conversation) eventObject.integration = conversation.integration;
  if (trigger) {
    eventObject.trigger = {
      flowId: trigger.flowId,
      nodeId: trigger.nodeId,
      ...(trigger.eventName !== undefined && { eventName: trigger.eventName }),
      ...(event.conversationId !== undefined && { conversationId: event.conversationId }),
      ...(event.userId !== undefined && { userId: event.userId }),
      ...(conversation && { integration: conversation.integration }),
    };
  }
  return eventObject;
}
