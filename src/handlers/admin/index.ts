import {
  ADMIN_ACCOUNT_OPERATIONS,
  ADMIN_MEMBER_OPERATIONS,
  ADMIN_TOKEN_OPERATIONS,
} from '../../contract/admin/index.ts';
import type { AccountActor, Principal, WorkspaceActor } from '../../domain/workspace/actors.ts';
import { implement } from '../operation.ts';
import { accountHandlers, introspectionHandlers } from './account.ts';
import { analyticsHandlers } from './analytics.ts';
import { botKeyHandlers } from './bot-keys.ts';
import { botVersionHandlers } from './bot-versions.ts';
import { botDraftHandlers } from './bot-drafts.ts';
import { botWebhookHandlers } from './bot-webhooks.ts';
import { botHandlers } from './bots.ts';
import { handoffHandlers } from './handoffs.ts';
import { hubHandlers, integrationHandlers } from './integrations.ts';
import { hubInterfaceHandlers, interfaceHandlers } from './interfaces.ts';
import { hubPluginHandlers, pluginHandlers } from './plugins.ts';
import { botModelHandlers, llmProviderHandlers } from './llm-providers.ts';
import { logHandlers } from './logs.ts';
import { memberHandlers } from './members.ts';
import { quotaHandlers } from './quotas.ts';
import { webhookSubscriptionHandlers } from './webhook-subscriptions.ts';
import { workspaceHandlers } from './workspaces.ts';

// The Admin API's tables (contract/admin/index.ts) bound to the domain, each for the actor its routes
// authenticate (api/admin/index.ts).

export const ADMIN_MEMBER_HANDLERS = implement<WorkspaceActor>()(ADMIN_MEMBER_OPERATIONS, {
  ...memberHandlers,
  ...botKeyHandlers,
  ...botHandlers,
  ...botVersionHandlers,
  ...botDraftHandlers,
  ...botWebhookHandlers,
  ...webhookSubscriptionHandlers,
  ...integrationHandlers,
  ...interfaceHandlers,
  ...pluginHandlers,
  ...logHandlers,
  ...analyticsHandlers,
  ...quotaHandlers,
  ...llmProviderHandlers,
  ...botModelHandlers,
  ...handoffHandlers,
});

export const ADMIN_ACCOUNT_HANDLERS = implement<AccountActor>()(ADMIN_ACCOUNT_OPERATIONS, {
  ...accountHandlers,
  ...workspaceHandlers,
  ...hubHandlers,
  ...hubInterfaceHandlers,
  ...hubPluginHandlers,
});

export const ADMIN_TOKEN_HANDLERS = implement<Principal>()(ADMIN_TOKEN_OPERATIONS, introspectionHandlers);
