import type { Executor } from '../../store/index.ts';
import type { QueuedNotice } from '../queue/event-queue.ts';
import type { BotRef, Events } from './events.ts';
import type { Workflow } from './schemas.ts';

/**
 * The event type by which the hosted platform tells an SDK bot what became of one of its workflows
 * (`event_received` of this type; the SDK's server dispatches it to `workflowStart`, `workflowContinue`
 * and `workflowTimeout` by `payload.type`).
 */
export const WORKFLOW_UPDATE_EVENT = 'workflow_update';

/** What happened to the workflow: `payload.type` of a `workflow_update` event. */
export const WORKFLOW_UPDATE_TYPES = ['workflow_started', 'workflow_continued', 'workflow_timedout'] as const;
export type WorkflowUpdateType = (typeof WORKFLOW_UPDATE_TYPES)[number];

/**
 * Whether a bot's code takes `workflow_update` events: an SDK bundle whose SDK dispatches them (3.5 and
 * later carry that event type in their server code). The bot definitions `bp deploy` sends never name
 * the definition's workflows (upstream's CLI leaves them out), so the bundle is what declares them; older
 * bundles (SDK 0.10 to 3.4) would take the event for one of their own and are never sent it.
 */
export function takesWorkflowUpdates(code: string): boolean {
  return code.includes(`'${WORKFLOW_UPDATE_EVENT}'`) || code.includes(`"${WORKFLOW_UPDATE_EVENT}"`);
}

/**
 * Queues a bot's `workflow_update` events, in the transaction of the workflow's change, for the bots that
 * take them (`bots.workflow_updates`, from `takesWorkflowUpdates` at each deploy); for the others, nothing.
 * The event names the workflow, its conversation and its user (the queue then runs it in the
 * conversation's order); its payload is the workflow as it was, and the bot is given it as it is when
 * the event runs (sdk-bots.ts).
 */
export class WorkflowUpdates {
  constructor(private readonly events: Events) {}

  /**
   * A request's update (createWorkflow, updateWorkflow, createEvent): admitted against the workspace's
   * backlog like the request's own events, claimed for this process's engine when it can be. The notice
   * goes to `notify` after the commit.
   */
  async forRequest(
    db: Executor,
    bot: BotRef,
    type: WorkflowUpdateType,
    workflow: Workflow,
  ): Promise<QueuedNotice | undefined> {
    if (!(await this.takes(db, bot.botId))) return undefined;
    const { notice } = await this.events.queueForTurn(bot, this.eventOf(type, workflow), db);
    return notice;
  }

  /** The sweeper's update (a workflow timed out): queued whatever the backlog, as expired states are. */
  async forSweep(
    db: Executor,
    botId: string,
    type: WorkflowUpdateType,
    workflow: Workflow,
  ): Promise<boolean> {
    if (!(await this.takes(db, botId))) return false;
    await this.events.queue(botId, this.eventOf(type, workflow), db);
    return true;
  }

  notify(notices: (QueuedNotice | undefined)[]): void {
    const queued = notices.filter((n): n is QueuedNotice => n !== undefined);
    if (queued.length > 0) this.events.notifyQueued(queued);
  }

  /** Tells the engine that the sweeper queued some (their ids unknown to it). */
  notifySwept(): void {
    this.events.notifyQueued();
  }

  private async takes(db: Executor, botId: string): Promise<boolean> {
    const row = await db
      .selectFrom('bots')
      .select('workflow_updates')
      .where('id', '=', botId)
      .executeTakeFirst();
    return row?.workflow_updates === 1;
  }

  private eventOf(type: WorkflowUpdateType, workflow: Workflow) {
    return {
      type: WORKFLOW_UPDATE_EVENT,
      payload: { type, workflow },
      workflowId: workflow.id,
      ...(workflow.conversationId !== undefined && { conversationId: workflow.conversationId }),
      ...(workflow.userId !== undefined && { userId: workflow.userId }),
    };
  }
}
