import { accountOperations, introspectionOperations } from './account.ts';
import { analyticsOperations } from './analytics.ts';
import { botKeyOperations } from './bot-keys.ts';
import { botVersionOperations } from './bot-versions.ts';
import { botDraftOperations } from './bot-drafts.ts';
import { botWebhookOperations } from './bot-webhooks.ts';
import { botOperations } from './bots.ts';
import { handoffOperations } from './handoffs.ts';
import { hubOperations, integrationOperations } from './integrations.ts';
import { hubInterfaceOperations, interfaceOperations } from './interfaces.ts';
import { hubPluginOperations, pluginOperations } from './plugins.ts';
import { botModelOperations, llmProviderOperations } from './llm-providers.ts';
import { logOperations } from './logs.ts';
import { memberOperations } from './members.ts';
import { quotaOperations } from './quotas.ts';
import { webhookSubscriptionOperations } from './webhook-subscriptions.ts';
import { workspaceOperations } from './workspaces.ts';

// The Admin API (`/v1/admin`), every operation declared once, in one table per actor its routes
// authenticate. Bot code's `client` offers none of them: a bot has no admin rights.

/**
 * The Admin API's operations in one workspace, as a member of it: a personal access token and
 * `x-workspace-id`.
 */
export const ADMIN_MEMBER_OPERATIONS = [
  ...memberOperations,
  ...botKeyOperations,
  ...botOperations,
  ...botVersionOperations,
  ...botDraftOperations,
  ...botWebhookOperations,
  ...webhookSubscriptionOperations,
  ...integrationOperations,
  ...interfaceOperations,
  ...pluginOperations,
  ...logOperations,
  ...analyticsOperations,
  ...quotaOperations,
  ...llmProviderOperations,
  ...botModelOperations,
  ...handoffOperations,
] as const;

/**
 * The Admin API's operations of an account itself, in no workspace: a personal access token alone (its
 * tokens, its workspaces; a workspace named in the path is acted in with the account's role there).
 */
export const ADMIN_ACCOUNT_OPERATIONS = [
  ...accountOperations,
  ...workspaceOperations,
  ...hubOperations,
  ...hubInterfaceOperations,
  ...hubPluginOperations,
] as const;

/** The Admin API's operations open to any valid token, an account's or a bot's API key (introspection). */
export const ADMIN_TOKEN_OPERATIONS = introspectionOperations;
