import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { everyKey } from '../../store/prepared.ts';
import type { Database, Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { invalidPayload } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { fromJson, toJson, withoutNulls } from '../shared/json.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { JsonObject } from '../shared/schemas.ts';
import { TaggedResource } from '../shared/tagged-resource.ts';
import { insertTags, discriminatingTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type { Workflow, CreateWorkflowBody, GetOrCreateWorkflowBody, UpdateWorkflowBody } from './schemas.ts';
import type { WorkflowStatus } from '../../value-sets.ts';
import type { QueuedNotice } from '../queue/event-queue.ts';
import type { BotRef, WorkflowListener } from './events.ts';
import type { WorkflowUpdates } from './workflow-updates.ts';

/** Once finished, a workflow's status never changes again. */
export const FINISHED_STATUSES: readonly WorkflowStatus[] = ['completed', 'cancelled', 'failed', 'timedout'];
const ACTIVE_STATUSES: readonly WorkflowStatus[] = ['pending', 'in_progress', 'listening', 'paused'];
/** A workflow waiting, which an update to `in_progress` continues (listening also on an event naming it). */
const WAITING_STATUSES: readonly WorkflowStatus[] = ['listening', 'paused'];

/**
 * Still running: written as literals, so that the store may use its index of the workflows still
 * running by their timeout (migration 0033), whose condition is this one.
 */
const STILL_RUNNING = sql<boolean>`status in (${sql.join(ACTIVE_STATUSES.map((s) => sql.lit(s)))})`;

/** Workflows timed out in one transaction each, at most this many per sweep. */
const SWEEP_BATCH = 500;

/** How long a workflow may run when its creator gives no `timeoutAt`. */
export const DEFAULT_WORKFLOW_TIMEOUT_MS = 2 * 24 * 3600 * 1000;

export interface ListWorkflowsQuery extends PageRequest {
  tags?: Record<string, string>;
  conversationId?: string;
  userId?: string;
  parentWorkflowId?: string;
  statuses?: WorkflowStatus[];
  name?: string;
}

function toWorkflow(row: Row<'workflows'>, tags: Record<string, string>): Workflow {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    input: fromJson<JsonObject>(row.input),
    output: fromJson<JsonObject>(row.output),
    ...(row.parent_workflow_id !== null && { parentWorkflowId: row.parent_workflow_id }),
    ...(row.conversation_id !== null && { conversationId: row.conversation_id }),
    ...(row.user_id !== null && { userId: row.user_id }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.completed_at !== null && { completedAt: row.completed_at }),
    ...(row.failure_reason !== null && { failureReason: row.failure_reason }),
    timeoutAt: row.timeout_at,
    tags,
  };
}

export class Workflows implements WorkflowListener {
  private readonly resource: TaggedResource<'workflows', Workflow>;

  constructor(
    private readonly store: Store,
    private readonly updates: WorkflowUpdates,
  ) {
    this.resource = new TaggedResource(store, {
      table: 'workflows',
      name: 'Workflow',
      states: 'workflow',
      columns: everyKey<Row<'workflows'>>()([
        'id',
        'bot_id',
        'name',
        'status',
        'input',
        'output',
        'parent_workflow_id',
        'conversation_id',
        'user_id',
        'event_id',
        'failure_reason',
        'timeout_at',
        'completed_at',
        'created_at',
        'updated_at',
      ]),
      toItem: toWorkflow,
    });
  }

  private get db() {
    return this.store.db;
  }

  /**
   * `id`: the bot runtime names its workflow runs before it stores them. A workflow created `pending`
   * starts: its bot is sent `workflow_started` (when it takes workflow updates).
   */
  async create(actor: BotActor, body: CreateWorkflowBody, id: string = newId('workflow')): Promise<Workflow> {
    const { workflow, notice } = await this.db
      .transaction()
      .execute((trx) => this.insert(actor, body, trx, id));
    this.updates.notify([notice]);
    return workflow;
  }

  private async insert(
    actor: BotActor,
    body: CreateWorkflowBody,
    db: Transaction<Database>,
    id: string = newId('workflow'),
  ): Promise<{ workflow: Workflow; notice: QueuedNotice | undefined }> {
    await this.requireRefs(actor, body, db);
    const now = nowIso();
    const row: Row<'workflows'> = {
      id,
      bot_id: actor.botId,
      name: body.name,
      status: body.status,
      input: toJson(body.input ?? {}),
      output: '{}',
      parent_workflow_id: body.parentWorkflowId ?? null,
      conversation_id: body.conversationId ?? null,
      user_id: body.userId ?? null,
      event_id: body.eventId ?? null,
      failure_reason: null,
      timeout_at: body.timeoutAt
        ? new Date(body.timeoutAt).toISOString()
        : new Date(Date.now() + DEFAULT_WORKFLOW_TIMEOUT_MS).toISOString(),
      completed_at: null,
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('workflows').values(row).execute();
    await insertTags(db, row.id, body.tags ?? {});
    const workflow = toWorkflow(row, body.tags ?? {});
    const notice =
      row.status === 'pending'
        ? await this.updates.forRequest(db, actor, 'workflow_started', workflow)
        : undefined;
    return { workflow, notice };
  }

  get(actor: BotActor, workflowId: string, db: Executor = this.db): Promise<Workflow> {
    return this.resource.get(actor, workflowId, db);
  }

  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateWorkflowBody,
  ): Promise<{ workflow: Workflow; created: boolean }> {
    const tags = body.tags ?? {};
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    const group = body.discriminateByStatusGroup;
    const statuses =
      group === 'finished' ? FINISHED_STATUSES : group === 'active' ? ACTIVE_STATUSES : undefined;
    const where = [sql`name = ${body.name}`];
    if (body.conversationId !== undefined) where.push(sql`conversation_id = ${body.conversationId}`);
    if (statuses) where.push(sql`status in (${sql.join(statuses)})`);
    let notice: QueuedNotice | undefined;
    const { item, created } = await this.resource.getOrCreate(
      actor,
      `${body.name}:${body.conversationId ?? ''}:${group ?? ''}:${toJson(discriminating)}`,
      // Unlike the other resources, a workflow matches on its name even without tags.
      { tags: discriminating, where, always: true },
      async (trx) => {
        const inserted = await this.insert(actor, { ...body, tags: withoutNulls(tags) }, trx);
        notice = inserted.notice;
        return inserted.workflow;
      },
    );
    this.updates.notify([notice]);
    return { workflow: item, created };
  }

  /**
   * A waiting workflow (listening, paused) set back `in_progress` continues: `workflow_continued`. The
   * row is held from its read, so a status changed meanwhile (the sweeper timing it out, an event
   * continuing it) is the one this update is decided on, never overwritten.
   */
  async update(actor: BotActor, workflowId: string, body: UpdateWorkflowBody): Promise<Workflow> {
    const { workflow, notice } = await this.db.transaction().execute(async (trx) => {
      const row = await this.resource.heldRow(actor, workflowId, trx);
      const current = row.status;
      if (body.status !== undefined && body.status !== current && FINISHED_STATUSES.includes(current)) {
        throw invalidPayload(`Workflow "${workflowId}" is ${current}: its status can no longer change`);
      }
      const now = nowIso();
      const finishing = body.status !== undefined && FINISHED_STATUSES.includes(body.status);
      const next: Row<'workflows'> = {
        ...row,
        status: body.status ?? row.status,
        output: body.output === undefined ? row.output : toJson(body.output),
        timeout_at: body.timeoutAt ? new Date(body.timeoutAt).toISOString() : row.timeout_at,
        failure_reason: body.failureReason ?? row.failure_reason,
        user_id: body.userId ?? row.user_id,
        event_id: body.eventId ?? row.event_id,
        completed_at: finishing && row.completed_at === null ? now : row.completed_at,
        updated_at: now,
      };
      await trx.updateTable('workflows').set(next).where('id', '=', workflowId).execute();
      const updated = await this.resource.withUpdatedTags(next, body.tags ?? {}, trx);
      const continues = next.status === 'in_progress' && WAITING_STATUSES.includes(current);
      return {
        workflow: updated,
        notice: continues
          ? await this.updates.forRequest(trx, actor, 'workflow_continued', updated)
          : undefined,
      };
    });
    this.updates.notify([notice]);
    return workflow;
  }

  /**
   * An event naming a workflow of its bot was queued (`Events`, in `db`'s transaction): a listening
   * workflow heard it, so it is `in_progress` again and its bot is sent `workflow_continued`. The status
   * changes by a conditional update, so two events heard at once continue it once.
   */
  async heard(
    db: Transaction<Database>,
    bot: BotRef,
    workflowId: string,
    sweep: boolean,
  ): Promise<QueuedNotice | undefined> {
    const row = await db
      .updateTable('workflows')
      .set({ status: 'in_progress', updated_at: nowIso() })
      .where('id', '=', workflowId)
      .where('bot_id', '=', bot.botId)
      .where('status', '=', 'listening')
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const workflow = await this.resource.withTags(row, db);
    if (!sweep) return this.updates.forRequest(db, bot, 'workflow_continued', workflow);
    await this.updates.forSweep(db, bot.botId, 'workflow_continued', workflow);
    return undefined;
  }

  /**
   * Times out the running workflows whose `timeoutAt` has passed: `timedout` (and finished), and their bot
   * sent `workflow_timedout`, in one transaction each. The status changes by a conditional update, so a
   * workflow times out once however many processes sweep.
   */
  async timeOutDue(now = nowIso()): Promise<number> {
    const due = await this.db
      .selectFrom('workflows')
      .select('id')
      .where(STILL_RUNNING)
      .where('timeout_at', '<=', now)
      .orderBy('timeout_at')
      .limit(SWEEP_BATCH)
      .execute();
    let timedOut = 0;
    let queued = false;
    for (const { id } of due) {
      const outcome = await this.db.transaction().execute(async (trx) => {
        const at = nowIso();
        const row = await trx
          .updateTable('workflows')
          .set({ status: 'timedout', completed_at: at, updated_at: at })
          .where('id', '=', id)
          .where(STILL_RUNNING)
          .where('timeout_at', '<=', now)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        const workflow = await this.resource.withTags(row, trx);
        return { queued: await this.updates.forSweep(trx, row.bot_id, 'workflow_timedout', workflow) };
      });
      if (!outcome) continue;
      timedOut++;
      queued ||= outcome.queued;
    }
    if (queued) this.updates.notifySwept();
    return timedOut;
  }

  async delete(actor: BotActor, workflowId: string): Promise<void> {
    await this.resource.delete(actor, workflowId);
  }

  list(actor: BotActor, query: ListWorkflowsQuery): Promise<Page<Workflow>> {
    const { conversationId, userId, parentWorkflowId, name, statuses } = query;
    return this.resource.list(actor, query, {
      tags: query.tags ?? {},
      where: [
        conversationId === undefined ? undefined : sql`workflows.conversation_id = ${conversationId}`,
        userId === undefined ? undefined : sql`workflows.user_id = ${userId}`,
        parentWorkflowId === undefined ? undefined : sql`workflows.parent_workflow_id = ${parentWorkflowId}`,
        name === undefined ? undefined : sql`workflows.name = ${name}`,
        statuses?.length ? sql`workflows.status in (${sql.join(statuses)})` : undefined,
      ],
    });
  }

  private async requireRefs(actor: BotActor, body: CreateWorkflowBody, db: Executor): Promise<void> {
    if (body.conversationId !== undefined)
      await requireOfBot(db, 'conversations', actor, body.conversationId);
    if (body.userId !== undefined) await requireOfBot(db, 'users', actor, body.userId);
    if (body.parentWorkflowId !== undefined)
      await requireOfBot(db, 'workflows', actor, body.parentWorkflowId);
  }
}
