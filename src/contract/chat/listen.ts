import { Type } from 'typebox';
import { operation } from '../operation.ts';
import { tag } from './tag.ts';

/**
 * A conversation's live signals, as server-sent events or over a WebSocket. Declared here like every
 * operation, but routed by hand (`api/chat/index.ts`): its answer is a stream, not one JSON body.
 */
export const listenConversation = operation({
  id: 'listenConversation',
  method: 'GET',
  path: '/conversations/:id/listen',
  access: 'read',
  tag,
  summary: 'Listen to a conversation (server-sent events or WebSocket)',
  description:
    'Server-sent events: `data: {"type","data"}` frames numbered by `id:`, and `data: ping`; reconnect with `Last-Event-ID` to receive what was missed. ' +
    'WebSocket (`Upgrade: websocket`, the key as the `x-user-key` query parameter): one text message per signal, the same JSON plus its number as `id`, and `ping`; reconnect with `?lastEventId=`.',
  params: { id: Type.String() },
  query: {
    lastEventId: Type.Optional(Type.String({ description: 'The number of the last signal received' })),
  },
  response: Type.String({ description: 'text/event-stream, or the WebSocket upgrade' }),
});
