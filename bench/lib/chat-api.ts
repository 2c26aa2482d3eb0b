import { HEADERS } from '../../src/contract/headers.ts';
import { listenConversation } from '../../src/contract/chat/index.ts';
import { requestOf, targetOf } from '../../src/contract/client.ts';
import { APIS, pathOf, rawCall } from './api.ts';
import { HttpConnection } from './http-client.ts';

/**
 * A chat user and a conversation, through the Chat API (createUser, then createConversation with
 * its key). On `conn` when given (left open), else on a connection of its own.
 */
export async function chatUserAndConversation(
  chatUrl: string,
  name = 'fan-out',
  conn?: HttpConnection,
): Promise<{ userKey: string; conversationId: string }> {
  const c = conn ?? HttpConnection.of(chatUrl);
  const base = new URL(chatUrl).pathname;
  try {
    const createUser = rawCall(base, APIS.chat.operations, 'createUser', { name });
    const user = await c.json(createUser.method, createUser.path, '', createUser.body);
    if (user.status !== 201) throw new Error(`createUser answered ${user.status}: ${user.body.toString()}`);
    const userKey = (user.json as { key: string }).key;
    const create = rawCall(base, APIS.chat.operations, 'createConversation', {});
    const conv = await c.json(create.method, create.path, `${HEADERS.userKey}: ${userKey}\r\n`, create.body);
    if (conv.status !== 201)
      throw new Error(`createConversation answered ${conv.status}: ${conv.body.toString()}`);
    return { userKey, conversationId: (conv.json as { conversation: { id: string } }).conversation.id };
  } finally {
    if (!conn) c.close();
  }
}

/** A conversation's listener (the Chat API's listenConversation), below a channel's URL or path. */
export const listenPath = (channel: string, conversationId: string): string =>
  `${channel}${targetOf(requestOf(listenConversation, { id: conversationId }))}`;

/** createMessage's path below a channel's path, for a load that writes each message's body itself. */
export const messagesPath = (channel: string): string =>
  pathOf(channel, APIS.chat.operations, 'createMessage', {});
