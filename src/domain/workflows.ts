import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Executor, Store } from '../store/index.ts';
import type { WorkflowsTable } from '../store/schema.ts';
import type { BotActor } from './actors.ts';
import { invalidPayload, notFound } from './errors.ts';
import { newId } from './ids.ts';
import { requireOfBot } from './ownership.ts';
import { fromJson, toJson, withoutNulls } from './json.ts';
import { withKeyLock } from './locks.ts';
import { Keyset, pageSizeOf } from './pagination.ts';
import type { Page, PageRequest } from './pagination.ts';
import { JsonObject, TagChangeMap, TagMap, Timestamp } from './schemas.ts';
import {
  applyTagChanges,
  deleteTags,
  discriminatingTags,
  findByTags,
  hasTags,
  loadTags,
  withTags,
  updateTags,
} from './tags.ts';
import { nowIso } from './time.ts';
import { deleteStatesOf } from './states.ts';

export const WORKFLOW_STATUSES = [
  'pending',
  'in_progress',
  'listening',
  'paused',
  'completed',
  'cancelled',
  'failed',
  'timedout',
] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** Once finished, a workflow's status never changes again. */
export const FINISHED_STATUSES: readonly WorkflowStatus[] = ['completed', 'cancelled', 'failed', 'timedout'];
const ACTIVE_STATUSES: readonly WorkflowStatus[] = ['pending', 'in_progress', 'listening', 'paused'];

/** How long a workflow may run when its creator gives no `timeoutAt`. */
export const DEFAULT_WORKFLOW_TIMEOUT_MS = 2 * 24 * 3600 * 1000;

export const WorkflowSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Enum(WORKFLOW_STATUSES),
  input: JsonObject,
  output: JsonObject,
  parentWorkflowId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Type.Optional(Timestamp),
  failureReason: Type.Optional(Type.String()),
  timeoutAt: Timestamp,
  tags: TagMap,
});
export type Workflow = Static<typeof WorkflowSchema>;

const StartStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('in_progress'),
  Type.Literal('listening'),
]);

export const CreateWorkflowBodySchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  input: Type.Optional(JsonObject),
  parentWorkflowId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time' })),
  tags: Type.Optional(TagMap),
  status: StartStatus,
  eventId: Type.Optional(Type.String()),
});
export type CreateWorkflowBody = Static<typeof CreateWorkflowBodySchema>;

export const GetOrCreateWorkflowBodySchema = Type.Object({
  ...CreateWorkflowBodySchema.properties,
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
  discriminateByStatusGroup: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('finished')])),
});
export type GetOrCreateWorkflowBody = Static<typeof GetOrCreateWorkflowBodySchema>;

export const UpdateWorkflowBodySchema = Type.Object({
  output: Type.Optional(JsonObject),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time' })),
  status: Type.Optional(
    Type.Enum(['completed', 'cancelled', 'listening', 'paused', 'failed', 'in_progress']),
  ),
  failureReason: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(TagChangeMap),
  userId: Type.Optional(Type.String()),
  eventId: Type.Optional(Type.String()),
});
export type UpdateWorkflowBody = Static<typeof UpdateWorkflowBodySchema>;

export interface ListWorkflowsQuery extends PageRequest {
  tags?: Record<string, string>;
  conversationId?: string;
  userId?: string;
  parentWorkflowId?: string;
  statuses?: WorkflowStatus[];
  name?: string;
}

function toWorkflow(row: WorkflowsTable, tags: Record<string, string>): Workflow {
  return {
    id: row.id,
    name: row.name,
    status: row.status as WorkflowStatus,
    input: fromJson<Record<string, unknown>>(row.input),
    output: fromJson<Record<string, unknown>>(row.output),
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

const keyset = new Keyset('workflows.created_at', 'desc', 'workflows.id');

export class Workflows {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.db;
  }

  /** `id`: the bot runtime names its workflow runs before it stores them. */
  async create(
    actor: BotActor,
    body: CreateWorkflowBody,
    db: Executor = this.db,
    id: string = newId('workflow'),
  ): Promise<Workflow> {
    await this.requireRefs(actor, body, db);
    const now = nowIso();
    const row: WorkflowsTable = {
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
    await applyTagChanges(db, row.id, body.tags ?? {});
    return toWorkflow(row, body.tags ?? {});
  }

  async get(actor: BotActor, workflowId: string, db: Executor = this.db): Promise<Workflow> {
    const row = await this.requireRow(actor, workflowId, db);
    return toWorkflow(row, (await loadTags(db, [row.id])).get(row.id) ?? {});
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
    const key = `workflow:${actor.botId}:${body.name}:${body.conversationId ?? ''}:${group ?? ''}:${toJson(discriminating)}`;
    return withKeyLock(this.store, key, async (trx) => {
      const extra = [sql<boolean>`workflows.name = ${body.name}`];
      if (body.conversationId !== undefined)
        extra.push(sql<boolean>`workflows.conversation_id = ${body.conversationId}`);
      if (statuses) extra.push(sql<boolean>`workflows.status in (${sql.join(statuses)})`);
      const existing = await findByTags(trx, 'workflows', actor.botId, discriminating, extra);
      if (existing) return { workflow: await this.get(actor, existing, trx), created: false };
      return {
        workflow: await this.create(actor, { ...body, tags: withoutNulls(tags) }, trx),
        created: true,
      };
    });
  }

  async update(actor: BotActor, workflowId: string, body: UpdateWorkflowBody): Promise<Workflow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, workflowId, trx);
      const current = row.status as WorkflowStatus;
      if (body.status !== undefined && body.status !== current && FINISHED_STATUSES.includes(current)) {
        throw invalidPayload(`Workflow "${workflowId}" is ${current}: its status can no longer change`);
      }
      const now = nowIso();
      const finishing = body.status !== undefined && FINISHED_STATUSES.includes(body.status);
      const next: WorkflowsTable = {
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
      return toWorkflow(next, await updateTags(trx, workflowId, body.tags ?? {}));
    });
  }

  async delete(actor: BotActor, workflowId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.requireRow(actor, workflowId, trx);
      await deleteTags(trx, [workflowId]);
      await deleteStatesOf(trx, actor.botId, 'workflow', workflowId);
      await trx.deleteFrom('workflows').where('id', '=', workflowId).execute();
    });
  }

  async list(actor: BotActor, query: ListWorkflowsQuery): Promise<Page<Workflow>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select = this.db
      .selectFrom('workflows')
      .selectAll('workflows')
      .where('workflows.bot_id', '=', actor.botId);
    if (query.conversationId !== undefined)
      select = select.where('conversation_id', '=', query.conversationId);
    if (query.userId !== undefined) select = select.where('user_id', '=', query.userId);
    if (query.parentWorkflowId !== undefined)
      select = select.where('parent_workflow_id', '=', query.parentWorkflowId);
    if (query.name !== undefined) select = select.where('name', '=', query.name);
    if (query.statuses?.length) select = select.where('status', 'in', query.statuses);
    for (const condition of hasTags('workflows.id', query.tags ?? {})) select = select.where(condition);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('workflows.created_at', 'desc')
      .orderBy('workflows.id', 'desc')
      .limit(pageSize + 1)
      .execute();
    return withTags(
      this.db,
      keyset.page(rows, pageSize, (r) => [r.created_at, r.id]),
      toWorkflow,
    );
  }

  private async requireRefs(actor: BotActor, body: CreateWorkflowBody, db: Executor): Promise<void> {
    if (body.conversationId !== undefined)
      await requireOfBot(db, 'conversations', actor, body.conversationId);
    if (body.userId !== undefined) await requireOfBot(db, 'users', actor, body.userId);
    if (body.parentWorkflowId !== undefined)
      await requireOfBot(db, 'workflows', actor, body.parentWorkflowId);
  }

  private async requireRow(actor: BotActor, workflowId: string, db: Executor): Promise<WorkflowsTable> {
    const row = await db
      .selectFrom('workflows')
      .selectAll()
      .where('id', '=', workflowId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    if (!row) throw notFound('Workflow', workflowId);
    return row;
  }
}
