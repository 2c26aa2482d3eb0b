import { Type } from 'typebox';
import { EmptySchema } from '../schemas.ts';
import { operation } from '../operation.ts';

/**
 * Operations the webchat API answers exactly as the Chat API does (its records are the Chat API's, and
 * so are these rules and answers): declared once, listed by both APIs, each under its own OpenAPI tag.
 * The others of the same name differ: the webchat answers its own views of the records (a user's `data`,
 * a conversation's last message, a message's feedback), and its routes name a conversation `id` where
 * the Chat API's name it `conversationId`, as the two hosted APIs do.
 */

export const deleteUser = (tag: string) =>
  operation({
    id: 'deleteUser',
    method: 'DELETE',
    path: '/users/me',
    access: 'write',
    tag,
    summary: 'Delete the user of the key',
    response: EmptySchema,
  });

export const deleteConversation = (tag: string) =>
  operation({
    id: 'deleteConversation',
    method: 'DELETE',
    path: '/conversations/:id',
    access: 'write',
    tag,
    summary: 'Delete a conversation the user owns',
    params: { id: Type.String() },
    response: EmptySchema,
  });

export const deleteMessage = (tag: string) =>
  operation({
    id: 'deleteMessage',
    method: 'DELETE',
    path: '/messages/:id',
    access: 'write',
    tag,
    summary: 'Delete a message the user sent',
    params: { id: Type.String() },
    response: EmptySchema,
  });
