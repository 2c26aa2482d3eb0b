import { ADMIN_ACCOUNT_OPERATIONS, ADMIN_MEMBER_OPERATIONS, ADMIN_TOKEN_OPERATIONS } from './admin/index.ts';
import { CHAT_TURN_OPERATIONS, CHAT_USER_OPERATIONS, CHAT_VISITOR_OPERATIONS } from './chat/index.ts';
import { COGNITIVE_OPERATIONS } from './cognitive/index.ts';
import { FILES_OPERATIONS } from './files/index.ts';
import type { OperationSpec } from './operation.ts';
import { fillPath } from './path.ts';
import { RUNTIME_OPERATIONS } from './runtime/index.ts';
import { TABLES_OPERATIONS } from './tables/index.ts';
import {
  WEBCHAT_SITE_OPERATIONS,
  WEBCHAT_TURN_OPERATIONS,
  WEBCHAT_USER_OPERATIONS,
  WEBCHAT_VISITOR_OPERATIONS,
} from './webchat/index.ts';

/** One of the server's APIs: where it is mounted, and every operation it serves, whoever its caller. */
export interface Api<Ops extends readonly OperationSpec[] = readonly OperationSpec[]> {
  /** The mount of its routes; `:name` a path parameter of the mount itself (the Chat API's webhook id). */
  readonly prefix: string;
  readonly operations: Ops;
}

/**
 * Every API of the contract, with its mount: the server routes each table under its API's prefix, and
 * clients (`contract/client.ts`) call its operations there. An operation's path is relative to it.
 */
export const APIS = {
  admin: {
    prefix: '/v1/admin',
    operations: [...ADMIN_MEMBER_OPERATIONS, ...ADMIN_ACCOUNT_OPERATIONS, ...ADMIN_TOKEN_OPERATIONS],
  },
  runtime: { prefix: '/v1/chat', operations: RUNTIME_OPERATIONS },
  cognitive: { prefix: '/v2/cognitive', operations: COGNITIVE_OPERATIONS },
  files: { prefix: '/v1', operations: FILES_OPERATIONS },
  tables: { prefix: '/v1', operations: TABLES_OPERATIONS },
  chat: {
    prefix: '/chat/:webhookId',
    operations: [...CHAT_VISITOR_OPERATIONS, ...CHAT_USER_OPERATIONS, ...CHAT_TURN_OPERATIONS],
  },
  webchat: {
    prefix: '/webchat/:clientId',
    operations: [
      ...WEBCHAT_VISITOR_OPERATIONS,
      ...WEBCHAT_SITE_OPERATIONS,
      ...WEBCHAT_USER_OPERATIONS,
      ...WEBCHAT_TURN_OPERATIONS,
    ],
  },
} as const satisfies Record<string, Api>;

/** An API's mount with its own path parameters filled in (`/chat/{webhookId}`), each URL-encoded. */
export function mountOf(api: Api, params: Record<string, string> = {}): string {
  return fillPath(api.prefix, params);
}
