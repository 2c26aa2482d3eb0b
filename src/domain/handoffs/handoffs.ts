import { sql } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { OPEN_HANDOFF_STATUSES } from '../../value-sets.ts';
import type { HandoffAction, HandoffStatus } from '../../value-sets.ts';
import { messageForBot } from '../chat/bot-format.ts';
import type { RecordedSignal } from '../live/conversation-log.ts';
import type { ConversationLog } from '../live/conversation-log.ts';
import type { Conversations } from '../runtime/conversations.ts';
import type { BotRef, Events } from '../runtime/events.ts';
import type { Messages } from '../runtime/messages.ts';
import type { CreateMessageBody, Message } from '../runtime/schemas.ts';
import type { Users } from '../runtime/users.ts';
import { ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, toJson, toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { PAGE_SIZE_MAX } from '../shared/page-size.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { nowIso } from '../shared/time.ts';
import type { BotActor, WorkspaceActor } from '../workspace/actors.ts';
import type { Members } from '../workspace/members.ts';
import { can, requireRole } from '../workspace/roles.ts';
import { HITL_EVENT_TYPES } from './hitl-schemas.ts';
import { HANDOFF_EVENT_TYPES, MAX_HANDOFF_TIMEOUT_SECONDS } from './schemas.ts';
import type {
  AssignHandoffBody,
  Handoff,
  HandoffEvent,
  HandoffMessageBody,
  ListHandoffsQuery,
  OpenHandoff,
} from './schemas.ts';

const keyset = new Keyset('h.created_at', 'desc', 'h.id');
/** Handoffs timed out per sweep at most; the next sweep takes the rest. */
const SWEEP_BATCH = 100;

/** A handoff's row with its agent's name (the account's display name, else its email). */
type HandoffRow = Row<'handoffs'> & { agent_name: string | null };

function toHandoff(row: HandoffRow): Handoff {
  return {
    id: row.id,
    botId: row.bot_id,
    conversationId: row.conversation_id,
    ...(row.user_id !== null && { userId: row.user_id }),
    reason: row.reason,
    ...(row.team !== null && { team: row.team }),
    source: row.source,
    status: row.status,
    ...(row.agent_id !== null &&
      row.agent_user_id !== null && {
        agent: { accountId: row.agent_id, userId: row.agent_user_id, name: row.agent_name ?? '' },
      }),
    ...(row.assigned_at !== null && { assignedAt: row.assigned_at }),
    ...(row.timeout_at !== null && { timeoutAt: row.timeout_at }),
    ...(row.on_resolved !== null && { onResolved: row.on_resolved }),
    ...(row.on_timeout !== null && { onTimeout: row.on_timeout }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.resolved_at !== null && { resolvedAt: row.resolved_at }),
    ...(row.timed_out_at !== null && { timedOutAt: row.timed_out_at }),
    ...(row.hitl_conversation_id !== null && { hitlConversationId: row.hitl_conversation_id }),
  };
}

function toEvent(row: Row<'handoff_events'>): HandoffEvent {
  return {
    id: row.id,
    action: row.action,
    ...(row.account_id !== null && { accountId: row.account_id }),
    detail: fromJson<JsonObject>(row.detail),
    createdAt: row.created_at,
  };
}

const isOpen = (status: string) => (OPEN_HANDOFF_STATUSES as readonly string[]).includes(status);

/** What a change of a handoff leaves to do after its commit: live signals, and the queue's notice. */
interface Changed {
  handoff: Handoff;
  signals: RecordedSignal[];
  queued: boolean;
}

/**
 * Human handoffs: a bot hands a conversation to a person (its `handoff` card, or the `hitl`
 * integration), whom members of its workspace take, answer, transfer and resolve. Each change is
 * recorded (`handoff_events`) and queued for the bot as an event of its conversation in the same
 * transaction (`HANDOFF_EVENT_TYPES`: its hooks see them, outgoing webhooks receive them, and a Parley
 * bot's dialog resumes on the close).
 */
export class Handoffs {
  constructor(
    private readonly store: Store,
    private readonly events: Events,
    private readonly messages: Messages,
    private readonly users: Users,
    private readonly conversations: Conversations,
    private readonly members: Members,
    private readonly log: ConversationLog,
  ) {}

  private get db() {
    return this.store.db;
  }

  /**
   * Opens a handoff of the conversation, or answers the one already open there (a turn tried again
   * after it opened one finds it, and a conversation has one open handoff at most).
   */
  async open(bot: BotRef, input: OpenHandoff): Promise<Handoff> {
    const timeout = input.timeoutSeconds;
    if (
      timeout !== undefined &&
      (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_HANDOFF_TIMEOUT_SECONDS)
    )
      throw invalidPayload(`A handoff's timeout is whole seconds from 1 to ${MAX_HANDOFF_TIMEOUT_SECONDS}`);
    const changed = await this.db.transaction().execute(async (trx): Promise<Changed> => {
      const open = await this.openOf(trx, bot.botId, input.conversationId);
      if (open) return { handoff: open, signals: [], queued: false };
      const now = nowIso();
      const row: Row<'handoffs'> = {
        id: newId('handoff'),
        workspace_id: bot.workspaceId,
        bot_id: bot.botId,
        conversation_id: input.conversationId,
        user_id: input.userId ?? null,
        reason: input.reason,
        team: input.team ?? null,
        source: input.source,
        status: 'pending',
        agent_id: null,
        agent_user_id: null,
        assigned_at: null,
        timeout_at: timeout === undefined ? null : new Date(Date.now() + timeout * 1000).toISOString(),
        on_resolved: input.onResolved ?? null,
        on_timeout: input.onTimeout ?? null,
        created_at: now,
        updated_at: now,
        resolved_at: null,
        timed_out_at: null,
        hitl_conversation_id: input.hitlConversationId ?? null,
      };
      await trx.insertInto('handoffs').values(row).execute();
      const handoff = toHandoff({ ...row, agent_name: null });
      await this.record(trx, handoff, 'started', null, { reason: input.reason });
      await this.queue(trx, bot, handoff, HANDOFF_EVENT_TYPES.started);
      return { handoff, signals: [], queued: true };
    });
    this.announce(changed);
    return changed.handoff;
  }

  /** The open handoff of a conversation, if it has one. */
  async openIn(bot: BotRef, conversationId: string): Promise<Handoff | undefined> {
    return this.openOf(this.db, bot.botId, conversationId);
  }

  /** A bot's handoffs, or (no `botId`) those of every bot of the actor's workspace. */
  async list(
    actor: WorkspaceActor,
    botId: string | undefined,
    query: ListHandoffsQuery & PageRequest,
  ): Promise<Page<Handoff>> {
    if (botId !== undefined) await requireBotOfWorkspace(this.db, actor, botId);
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select =
      botId === undefined
        ? this.selectHandoffs(this.db).where('h.workspace_id', '=', actor.workspaceId)
        : this.selectHandoffs(this.db).where('h.bot_id', '=', botId);
    if (query.status !== undefined) select = select.where('h.status', '=', query.status);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('h.created_at', 'desc')
      .orderBy('h.id', 'desc')
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
    return { ...page, items: page.items.map(toHandoff) };
  }

  /** A handoff with the conversation's messages so far (the latest, oldest first) and what happened to it. */
  async get(
    actor: WorkspaceActor,
    botId: string,
    handoffId: string,
  ): Promise<{ handoff: Handoff; messages: Message[]; events: HandoffEvent[] }> {
    const handoff = await this.require(actor, botId, handoffId);
    const bot = { botId, workspaceId: actor.workspaceId };
    const [messages, events] = await Promise.all([
      this.transcript(bot, handoff),
      this.db
        .selectFrom('handoff_events')
        .selectAll()
        .where('handoff_id', '=', handoffId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    ]);
    return { handoff, messages, events: events.map(toEvent) };
  }

  /**
   * What the agent reads, the latest messages oldest first, each once: the conversation's; for a `hitl`
   * handoff, the visitor's conversation until it opened, then its hitl conversation, where the bot copies
   * the visitor's messages (the originals are not shown again) and the agents write (the bot's copies
   * of theirs in the visitor's conversation are not shown either). The hitl conversation's messages
   * are shown as the visitor's conversation reads them (`asVisitorSees`).
   */
  private async transcript(bot: BotRef, handoff: Handoff): Promise<Message[]> {
    const latest = (conversationId: string, beforeDate?: string) =>
      this.messages
        .list(bot, { conversationId, pageSize: PAGE_SIZE_MAX, ...(beforeDate && { beforeDate }) })
        .then((page) => page.items);
    const hitl = handoff.hitlConversationId;
    const messages =
      hitl === undefined
        ? await latest(handoff.conversationId)
        : [
            ...(await latest(handoff.conversationId, handoff.createdAt)),
            ...(await latest(hitl)).map((m) => asVisitorSees(m, handoff)),
          ];
    return messages.sort(byCreation).slice(-PAGE_SIZE_MAX);
  }

  /**
   * Gives an open handoff to an agent: the caller (taking it), or the member `agentId` names (a
   * transfer). The agent joins the conversation as a user of the bot named after them, whom the
   * visitor sees as the author of their messages.
   */
  async assign(
    actor: WorkspaceActor,
    botId: string,
    handoffId: string,
    body: AssignHandoffBody,
  ): Promise<Handoff> {
    requireRole(actor.role, 'handoffs.answer');
    const current = await this.require(actor, botId, handoffId);
    this.requireOpen(current);
    const agentId = body.agentId ?? actor.accountId;
    if (agentId !== actor.accountId) {
      const role = await this.members.roleOf(agentId, actor.workspaceId);
      if (!role) throw invalidPayload(`Account "${agentId}" is not a member of this workspace`);
      if (!can(role, 'handoffs.answer'))
        throw invalidPayload(`The ${role} role may not answer handoffs: give it to an agent or a developer`);
    }
    const name = await this.nameOf(agentId);
    const bot = { botId, workspaceId: actor.workspaceId };
    const agentUserId = await this.agentUser(bot, agentId, name);
    const changed = await this.db.transaction().execute(async (trx): Promise<Changed> => {
      const now = nowIso();
      const updated = await trx
        .updateTable('handoffs')
        .set({
          status: 'assigned',
          agent_id: agentId,
          agent_user_id: agentUserId,
          assigned_at: now,
          updated_at: now,
        })
        .where('id', '=', handoffId)
        .where('status', 'in', OPEN_HANDOFF_STATUSES)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw this.closed(handoffId);
      const handoff = await this.requireIn(trx, botId, handoffId);
      const transfer = current.agent !== undefined && current.agent.accountId !== agentId;
      await this.record(trx, handoff, transfer ? 'transferred' : 'assigned', actor.accountId, {
        agentId,
        ...(transfer && current.agent && { fromAgentId: current.agent.accountId }),
      });
      const signals: RecordedSignal[] = [];
      for (const conversationId of [handoff.conversationId, handoff.hitlConversationId]) {
        const joined =
          conversationId !== undefined &&
          (await this.conversations.ensureParticipant(conversationId, agentUserId, trx));
        if (joined) signals.push(joined);
      }
      await this.queue(trx, bot, handoff, HANDOFF_EVENT_TYPES.assigned);
      await this.queueHitl(trx, bot, handoff, HITL_EVENT_TYPES.assigned, { userId: agentUserId });
      return { handoff, signals, queued: true };
    });
    this.announce(changed);
    return changed.handoff;
  }

  /**
   * Sends a message to the visitor as the agent who has the handoff: in the conversation, from the
   * agent's user, as the bot's side of it (no turn for the bot; out through the conversation's channel).
   */
  async sendMessage(
    actor: WorkspaceActor,
    botId: string,
    handoffId: string,
    body: HandoffMessageBody,
  ): Promise<Message> {
    requireRole(actor.role, 'handoffs.answer');
    const handoff = await this.require(actor, botId, handoffId);
    this.requireOpen(handoff);
    if (handoff.agent?.accountId !== actor.accountId)
      throw new ApiError(
        'RelationConflict',
        handoff.agent
          ? `Handoff "${handoffId}" is ${handoff.agent.name}'s: have it transferred to you first`
          : `Handoff "${handoffId}" has no agent yet: take it first (assign)`,
      );
    const { type, payload } = messageForBot({
      payload: body.payload,
      ...(body.metadata && { metadata: body.metadata }),
    });
    const bot = { botId, workspaceId: actor.workspaceId };
    const { userId } = handoff.agent;
    // A `hitl` handoff's agent writes in its hitl conversation, to the bot, which forwards it to the
    // visitor as the hosted platform's hitl plugin does: posted in both, the visitor would read it twice.
    const message =
      handoff.hitlConversationId === undefined
        ? await this.messages.create(
            bot,
            { conversationId: handoff.conversationId, userId, type, payload, tags: {} },
            { fromAgent: true },
          )
        : await this.messages.create(bot, {
            conversationId: handoff.hitlConversationId,
            userId,
            type,
            payload,
            tags: {},
          });
    await this.record(this.db, handoff, 'message', actor.accountId, { messageId: message.id, type });
    return message;
  }

  /**
   * A message of the bot (the Runtime API's `createMessage`). The bot's message into a conversation it
   * handed over through the `hitl` integration that names the handoff's agent's user in
   * `payload.userId` (how the hitl plugin forwards an agent's message, and how the hosted webchat shows
   * it as theirs) is written as that agent's, as their own messages in a card's handoff are: the
   * visitor sees their name. Any other message is created as it is.
   */
  async createMessage(actor: BotActor, body: CreateMessageBody): Promise<Message> {
    const as = body.payload.userId;
    if (body.userId !== actor.botId || typeof as !== 'string' || as === actor.botId)
      return this.messages.create(actor, body);
    // The latest, open or not: a message the agent sent just before resolving is forwarded after.
    const row = await this.selectHandoffs(this.db)
      .where('h.bot_id', '=', actor.botId)
      .where('h.conversation_id', '=', body.conversationId)
      .where('h.hitl_conversation_id', 'is not', null)
      .orderBy('h.created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.agent_user_id === as
      ? this.messages.create(actor, { ...body, userId: as }, { fromAgent: true })
      : this.messages.create(actor, body);
  }

  /** Closes an open handoff as a member: the bot resumes. */
  async resolve(actor: WorkspaceActor, botId: string, handoffId: string): Promise<Handoff> {
    requireRole(actor.role, 'handoffs.answer');
    await this.require(actor, botId, handoffId);
    return this.close({ botId, workspaceId: actor.workspaceId }, handoffId, 'resolved', actor.accountId);
  }

  /** The handoff of a hitl conversation (`stopHitl` names it), if it is the bot's. */
  async ofHitlConversation(bot: BotRef, hitlConversationId: string): Promise<Handoff | undefined> {
    const row = await this.selectHandoffs(this.db)
      .where('h.hitl_conversation_id', '=', hitlConversationId)
      .where('h.bot_id', '=', bot.botId)
      .executeTakeFirst();
    return row && toHandoff(row);
  }

  /**
   * Closes an open handoff as the bot (`stopHitl`): resolved, with no account. The bot stopped it, so
   * it gets no `hitl:hitlStopped` for it (the `handoff.resolved` event still records it).
   */
  async stopByBot(bot: BotRef, handoffId: string): Promise<Handoff> {
    return this.close(bot, handoffId, 'resolved', null, OPEN_HANDOFF_STATUSES, { byBot: true });
  }

  /**
   * Times out the pending handoffs whose deadline has passed, each with one conditional update, so a
   * handoff times out once however many processes sweep at the same moment; answers how many did.
   */
  async expireDue(now = nowIso()): Promise<number> {
    const due = await this.db
      .selectFrom('handoffs')
      .select(['id', 'bot_id', 'workspace_id'])
      .where('status', '=', sql.lit('pending'))
      .where('timeout_at', '<=', now)
      .orderBy('timeout_at')
      .limit(SWEEP_BATCH)
      .execute();
    let expired = 0;
    for (const row of due) {
      const bot = { botId: row.bot_id, workspaceId: row.workspace_id };
      const done = await this.close(bot, row.id, 'timed_out', null, ['pending']).then(
        () => true,
        (err: unknown) => {
          if (err instanceof ApiError && err.type === 'RelationConflict') return false;
          throw err;
        },
      );
      if (done) expired++;
    }
    return expired;
  }

  private async close(
    bot: BotRef,
    handoffId: string,
    status: 'resolved' | 'timed_out',
    accountId: string | null,
    from: readonly HandoffStatus[] = OPEN_HANDOFF_STATUSES,
    { byBot }: { byBot: boolean } = { byBot: false },
  ): Promise<Handoff> {
    const changed = await this.db.transaction().execute(async (trx): Promise<Changed> => {
      const now = nowIso();
      const updated = await trx
        .updateTable('handoffs')
        .set({
          status,
          updated_at: now,
          ...(status === 'resolved' ? { resolved_at: now } : { timed_out_at: now }),
        })
        .where('id', '=', handoffId)
        .where('bot_id', '=', bot.botId)
        .where('status', 'in', from)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw this.closed(handoffId);
      const handoff = await this.requireIn(trx, bot.botId, handoffId);
      await this.record(trx, handoff, status, accountId, {});
      await this.queue(
        trx,
        bot,
        handoff,
        status === 'resolved' ? HANDOFF_EVENT_TYPES.resolved : HANDOFF_EVENT_TYPES.timedOut,
      );
      // An agent's resolve, or the timeout: the bot's hitl session stopped without it.
      if (!byBot) await this.queueHitl(trx, bot, handoff, HITL_EVENT_TYPES.stopped, {});
      return { handoff, signals: [], queued: true };
    });
    this.announce(changed);
    return changed.handoff;
  }

  /**
   * The bot's user that stands for an agent in its conversations: the one an earlier handoff of the
   * bot made for them (renamed when the member's name changed), or a new one.
   */
  private async agentUser(bot: BotRef, agentId: string, name: string): Promise<string> {
    const earlier = await this.db
      .selectFrom('handoffs')
      .select('agent_user_id')
      .where('bot_id', '=', bot.botId)
      .where('agent_id', '=', agentId)
      .where('agent_user_id', 'is not', null)
      .limit(1)
      .executeTakeFirst();
    const userId = earlier?.agent_user_id;
    if (userId && (await this.users.exists(bot, userId))) {
      const user = await this.users.get(bot, userId);
      if (user.name !== name) await this.users.update(bot, userId, { name });
      return userId;
    }
    return (await this.users.create(bot, { name, tags: {} })).id;
  }

  private async nameOf(accountId: string): Promise<string> {
    const row = await this.db
      .selectFrom('accounts')
      .select(['display_name', 'email'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw notFound('Account', accountId);
    return row.display_name ?? row.email;
  }

  private selectHandoffs(db: Executor) {
    return db
      .selectFrom('handoffs as h')
      .leftJoin('accounts as a', 'a.id', 'h.agent_id')
      .selectAll('h')
      .select(sql<string | null>`coalesce(a.display_name, a.email)`.as('agent_name'));
  }

  private async openOf(db: Executor, botId: string, conversationId: string): Promise<Handoff | undefined> {
    const row = await this.selectHandoffs(db)
      .where('h.bot_id', '=', botId)
      .where('h.conversation_id', '=', conversationId)
      .where('h.status', 'in', OPEN_HANDOFF_STATUSES)
      .orderBy('h.created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toHandoff(row);
  }

  /** A handoff of a bot of the actor's workspace, or 404 (another workspace's is not there for them). */
  private async require(actor: WorkspaceActor, botId: string, handoffId: string): Promise<Handoff> {
    await requireBotOfWorkspace(this.db, actor, botId);
    return this.requireIn(this.db, botId, handoffId);
  }

  private async requireIn(db: Executor, botId: string, handoffId: string): Promise<Handoff> {
    const row = await this.selectHandoffs(db)
      .where('h.id', '=', handoffId)
      .where('h.bot_id', '=', botId)
      .executeTakeFirst();
    if (!row) throw notFound('Handoff', handoffId);
    return toHandoff(row);
  }

  private requireOpen(handoff: Handoff): void {
    if (!isOpen(handoff.status)) throw this.closed(handoff.id);
  }

  private closed(handoffId: string): ApiError {
    return new ApiError('RelationConflict', `Handoff "${handoffId}" is closed`);
  }

  private async record(
    db: Executor,
    handoff: Handoff,
    action: HandoffAction,
    accountId: string | null,
    detail: JsonObject,
  ): Promise<void> {
    await db
      .insertInto('handoff_events')
      .values({
        id: newId('handoffEvent'),
        handoff_id: handoff.id,
        action,
        account_id: accountId,
        detail: toJson(detail),
        created_at: nowIso(),
      })
      .execute();
  }

  /** The change as an event of the bot in the handoff's conversation (its webhooks fanned out with it). */
  private async queue(db: Executor, bot: BotRef, handoff: Handoff, type: string): Promise<void> {
    await this.events.queue(
      bot.botId,
      {
        type,
        payload: { handoff: toJsonObject(handoff) },
        conversationId: handoff.conversationId,
        ...(handoff.userId !== undefined && { userId: handoff.userId }),
      },
      db,
    );
  }

  /**
   * One of the `hitl` integration's events, for a handoff it opened: in its hitl conversation, with the
   * hitl conversation's id in the payload (as the interface's events carry it).
   */
  private async queueHitl(
    db: Executor,
    bot: BotRef,
    handoff: Handoff,
    type: string,
    payload: JsonObject,
  ): Promise<void> {
    const conversationId = handoff.hitlConversationId;
    if (conversationId === undefined) return;
    await this.events.queue(bot.botId, { type, payload: { conversationId, ...payload }, conversationId }, db);
  }

  private announce(changed: Changed): void {
    if (changed.signals.length > 0) this.log.publish(changed.signals);
    // The queue is told after the commit, when the event can be seen by every process.
    if (changed.queued) this.events.notifyQueued();
  }
}

const byCreation = (a: Message, b: Message) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;

/**
 * A message of a hitl conversation as the visitor's conversation reads it: there the agents' messages
 * are the bot's side (outgoing) and the bot's copies of the visitor's (the bot writing as the user its
 * `payload.userId` names, as the interface's hitl channel lets it) are the visitor's (incoming).
 */
function asVisitorSees(message: Message, handoff: Handoff): Message {
  if (message.direction === 'incoming') return { ...message, direction: 'outgoing' };
  const as = message.payload.userId;
  if (typeof as !== 'string') return message;
  return { ...message, direction: 'incoming', userId: handoff.userId ?? as };
}
