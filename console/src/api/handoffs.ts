// The Admin API operations of human handoffs (src/contract/admin/handoffs.ts), through the contract's
// client: what the inbox reads and does.
import { PAGE_SIZE_MAX } from '../../../src/domain/shared/page-size.ts';
import { APIS, apiClient } from './client.ts';
import type { AdminIn, Out } from './types.ts';

export type Handoff = Out<'getHandoff'>['handoff'];
export type HandoffDetail = Out<'getHandoff'>;
export type HandoffStatus = Handoff['status'];
export type HandoffPayload = AdminIn<'createHandoffMessage'>['payload'];

/** Calls cancelled by `signal` (a poll the screen no longer needs). */
const as = (signal?: AbortSignal) => apiClient(APIS.admin, signal ? { signal } : {});
const session = as();

export const handoffs = {
  /** One page of the workspace's handoffs in `status` (every bot's), newest first: the inbox's queue. */
  listWorkspaceHandoffs: (status: HandoffStatus, signal?: AbortSignal) =>
    as(signal).listWorkspaceHandoffs({ status, pageSize: PAGE_SIZE_MAX }),
  getHandoff: (botId: string, handoffId: string, signal?: AbortSignal) =>
    as(signal).getHandoff({ id: botId, handoffId }),
  /** Takes it (no `agentId`), or gives it to the member `agentId` (a transfer). */
  assignHandoff: (botId: string, handoffId: string, agentId?: string) =>
    session.assignHandoff({ id: botId, handoffId, ...(agentId !== undefined && { agentId }) }),
  createHandoffMessage: (botId: string, handoffId: string, payload: HandoffPayload) =>
    session.createHandoffMessage({ id: botId, handoffId, payload }),
  resolveHandoff: (botId: string, handoffId: string) => session.resolveHandoff({ id: botId, handoffId }),
};
