import { HttpConnection } from './http-client.ts';

/**
 * A chat user and a conversation, through the Chat API (`POST {chatUrl}/users`, then
 * `/conversations` with its key). On `conn` when given (left open), else on a connection of its own.
 */
export async function chatUserAndConversation(
  chatUrl: string,
  name = 'fan-out',
  conn?: HttpConnection,
): Promise<{ userKey: string; conversationId: string }> {
  const c = conn ?? HttpConnection.of(chatUrl);
  const base = new URL(chatUrl).pathname;
  try {
    const user = await c.json('POST', `${base}/users`, '', { name });
    if (user.status !== 201) throw new Error(`createUser answered ${user.status}: ${user.body.toString()}`);
    const userKey = (user.json as { key: string }).key;
    const conv = await c.json('POST', `${base}/conversations`, `x-user-key: ${userKey}\r\n`, {});
    if (conv.status !== 201)
      throw new Error(`createConversation answered ${conv.status}: ${conv.body.toString()}`);
    return { userKey, conversationId: (conv.json as { conversation: { id: string } }).conversation.id };
  } finally {
    if (!conn) c.close();
  }
}
