import type { ChatSession } from '../../domain/chat/chat.ts';
import type { WebchatVisitor } from '../../domain/webchat/webchat.ts';
import { operationsFor } from '../operation.ts';

/** Webchat API operations of a visitor: no user yet (or a site's backend with the admin secret). */
export const visitor = operationsFor<WebchatVisitor>();
/** Webchat API operations of a site's backend: its requests carry the channel's admin secret. */
export const site = operationsFor<WebchatVisitor>();
/** Webchat API operations of an end user authenticated by `x-user-key`. */
export const user = operationsFor<ChatSession>();

export const tag = 'Webchat';
