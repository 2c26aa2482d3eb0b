/**
 * Live signals of a conversation, published by the domain when something happens in it and
 * delivered to whoever listens (the Chat API's SSE streams). Ids here are Parley's own; the
 * Chat API maps them to the ids its clients chose.
 */
export type ConversationSignal =
  | {
      type: 'message_created';
      conversationId: string;
      message: {
        id: string;
        createdAt: string;
        payload: Record<string, unknown>;
        userId: string;
        type: string;
      };
      isBot: boolean;
    }
  | { type: 'message_deleted'; conversationId: string; messageId: string; userId: string }
  | {
      type: 'event_created';
      conversationId: string;
      event: {
        id: string | null;
        createdAt: string;
        payload: Record<string, unknown>;
        userId: string | null;
      };
      isBot: boolean;
    }
  | { type: 'participant_added'; conversationId: string; userId: string }
  | { type: 'participant_removed'; conversationId: string; userId: string };

export interface SignalSink {
  publish(signal: ConversationSignal): void;
}
