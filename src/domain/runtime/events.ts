import { sql } from 'kysely';
import type { RawBuilder, Transaction } from 'kysely';
import type { Static } from 'typebox';
import type { Executor, Store } from '../../store/index.ts';
import type { Database, Row } from '../../store/schema.ts';
import { prepare } from '../../store/prepared.ts';
import type { BotActor } from '../workspace/actors.ts';
import { invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { toJson } from '../shared/json.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { JsonObject } from '../shared/schemas.ts';
import type { ConversationLog, RecordedSignal } from '../live/conversation-log.ts';
import type { BacklogQuota } from '../queue/backlog-quota.ts';
import type { Admission, AdmissionEntry } from '../queue/admission.ts';
import type { ClaimedEvent, EventQueue, QueuedNotice } from '../queue/event-queue.ts';
import { nowIso } from '../shared/time.ts';
import { toEvent } from './event-record.ts';
import { NEW_EVENT_COLUMNS } from './event-record.ts';
import type { NewEventRow } from './event-record.ts';
import type { Event, CreateEventBody } from './schemas.ts';
import type { ScheduleSchema } from './schemas.ts';
import type { EventStatus } from '../../value-sets.ts';

export interface ListEventsQuery extends PageRequest {
  type?: string;
  conversationId?: string;
  userId?: string;
  messageId?: string;
  workflowId?: string;
  status?: EventStatus;
}

/** What the engine queues for a bot: an event record and who it concerns. */
export interface QueuedEvent {
  type: string;
  payload: JsonObject;
  conversationId?: string;
  userId?: string;
  messageId?: string;
  workflowId?: string;
  /** When set, the event waits with status `scheduled` until then. */
  scheduledFor?: string;
}

/** The workspace of the bot `botId` names, as an insert's value: one source of truth, the bot's row. */
export function workspaceOf(botId: string): RawBuilder<string> {
  return sql<string>`(select workspace_id from bots where id = ${botId})`;
}

const keyset = new Keyset('events.created_at', 'desc', 'events.id');

const insertEvent = prepare(NEW_EVENT_COLUMNS, (db, row: NewEventRow) =>
  db.insertInto('events').values({ ...row, workspace_id: workspaceOf(row.bot_id) }),
);

/** The row of an event the bot is given: `pending` (queued now) or `scheduled` (queued when due). */
export function eventRow(botId: string, event: QueuedEvent, now: string): NewEventRow {
  return {
    id: newId('event'),
    bot_id: botId,
    type: event.type,
    payload: toJson(event.payload),
    conversation_id: event.conversationId ?? null,
    user_id: event.userId ?? null,
    message_id: event.messageId ?? null,
    workflow_id: event.workflowId ?? null,
    status: event.scheduledFor ? 'scheduled' : 'pending',
    failure_reason: null,
    scheduled_for: event.scheduledFor ?? null,
    lease_owner: null,
    lease_until: null,
    attempts: 0,
    deliveries: 0,
    created_at: now,
    updated_at: now,
  };
}

/** A bot, and the workspace whose share of the engine and whose backlog its events take. */
export type BotRef = Pick<BotActor, 'botId' | 'workspaceId'>;

/** The notice of an event queued for a turn, with its claim when this process's engine took it. */
function noticeOf(id: string, workspaceId: string, claimed: ClaimedEvent | undefined): QueuedNotice {
  return { id, workspaceId, ...(claimed && { claimed }) };
}

/** Where each event a bot queues goes beside its queue (its outgoing webhooks), in the same transaction. */
export interface EventOutbox {
  fanOut(db: Executor, botId: string, event: Event): Promise<void>;
  /** Whether `fanOut` writes anything for an event of this type. */
  wants(db: Executor, botId: string, type: string): Promise<boolean>;
}

/**
 * What an event naming a workflow does to it (workflows.ts: a listening workflow hears it and continues),
 * in the transaction that queues the event; `sweep` when the sweeper fires a scheduled one.
 */
export interface WorkflowListener {
  heard(
    db: Transaction<Database>,
    bot: BotRef,
    workflowId: string,
    sweep: boolean,
  ): Promise<QueuedNotice | undefined>;
}

/** The bot's events: its durable queue (`pending` until processed) and their history. */
export class Events {
  private workflows: WorkflowListener | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: ConversationLog,
    private readonly queueWatch: Pick<
      EventQueue,
      'notify' | 'claimAtInsert' | 'insertClaimed' | 'termsOfClaimAsStored' | 'claimedAsStored'
    >,
    private readonly outbox: EventOutbox,
    private readonly quota: BacklogQuota,
    /** Undefined: every event is admitted that the quota lets through. */
    private readonly admission: Admission | undefined,
  ) {}

  private get db() {
    return this.store.db;
  }

  /** The workflows, told of each event that names one (made after the events, which they queue). */
  useWorkflows(workflows: WorkflowListener): void {
    this.workflows = workflows;
  }

  /**
   * Tells the engine that pending events were committed, so it looks for work at once instead of at its
   * next poll. Callers that queue inside a transaction call this after the commit: before it, another
   * connection (Postgres) would not see the event yet. `queued` names the events, when the caller knows
   * them (`queueForTurn`): the engine then runs or claims just those, instead of looking through the queue.
   */
  notifyQueued(queued?: QueuedNotice[]): void {
    this.queueWatch.notify(queued);
  }

  /**
   * Queues a pending event from outside the engine (a message, an API call, a webhook request) in `db`'s
   * transaction, claimed at once for this process's engine when it can be: the notice to give
   * `notifyQueued` after the commit. Refused (`RetryLater`) when the bot's workspace has its full backlog.
   */
  async queueForTurn(
    bot: BotRef,
    event: Omit<QueuedEvent, 'scheduledFor'>,
    db: Executor,
    /** The instant its conversation's row was stamped with in this transaction, if it was (`stamp`). */
    stamped?: string,
    /** What admission let in as the request arrived (`enter`). */
    entry?: AdmissionEntry,
  ): Promise<{ event: Event; notice: QueuedNotice }> {
    await this.admit(bot, db, entry);
    const row = await this.rowOf(bot.botId, event, db, stamped);
    // Where it can, the insert claims it too (a database in this process): else the claim follows it.
    const inserted = await this.queueWatch.insertClaimed(db, row, bot.workspaceId);
    if (!inserted) await insertEvent.execute(db, row);
    const stored = toEvent(row);
    await this.outbox.fanOut(db, bot.botId, stored);
    const notice = inserted
      ? noticeOf(row.id, bot.workspaceId, inserted.claimed)
      : await this.claimForTurn(bot, row.id, db);
    return { event: stored, notice };
  }

  /**
   * Throws `RetryLater` when the bot's workspace has its full backlog, or when the engines are behind and
   * it holds its share of what waits (`Admission`): what a caller's own insert checks first.
   */
  async admit(bot: BotRef, db: Executor, entry?: AdmissionEntry): Promise<void> {
    await this.quota.admit(db, bot.workspaceId);
    await this.admission?.admit(db, bot.workspaceId, entry);
  }

  /**
   * Decides a request that will queue an event as it arrives, before it waits for a connection
   * (`Admission.enter`): refused (`RetryLater`) at no cost to the store; let in, it counts as waiting
   * until its entry leaves (undefined without admission control).
   */
  enter(bot: BotRef): AdmissionEntry | undefined {
    return this.admission?.enter(bot.workspaceId);
  }

  /**
   * Runs the work of a request that will queue an event, decided as it arrives (`enter`), unless its
   * caller decided it earlier (`entered`, as the chat APIs do before their user read): it counts as
   * waiting until `work` ends, and `work` gives its entry to `admit`.
   */
  async entering<T>(
    bot: BotRef,
    work: (entry: AdmissionEntry | undefined) => Promise<T>,
    entered?: AdmissionEntry,
  ): Promise<T> {
    const entry = entered ?? this.enter(bot);
    try {
      return await work(entry);
    } finally {
      entry?.leave();
    }
  }

  /**
   * A pending event that the caller's own statement inserted in `db`'s transaction (its row made by
   * `eventRow`, after `admit`): what `queueForTurn` does after its insert, its webhooks and its claim.
   */
  async insertedForTurn(bot: BotRef, event: Event, db: Executor): Promise<QueuedNotice> {
    await this.outbox.fanOut(db, bot.botId, event);
    return this.claimForTurn(bot, event.id, db);
  }

  /**
   * Whether queuing an event of this type writes more than the event (a delivery to a webhook, in its
   * transaction): when it does not, a statement that stores the event with its message is a transaction
   * of its own, and `committedForTurn` claims the event after it.
   */
  writesBeside(bot: BotRef, type: string): Promise<boolean> {
    return this.outbox.wants(this.db, bot.botId, type);
  }

  /**
   * A pending event that the caller's own statement stored and committed (its row made by `eventRow`,
   * after `admit`, and `writesBeside` false): claimed for this process's engine on the turns' connections.
   */
  committedForTurn(bot: BotRef, eventId: string): Promise<QueuedNotice> {
    return this.claimForTurn(bot, eventId, this.store.turnDb);
  }

  /**
   * On a database server, the terms on which a statement that stores a pending event of the bot (as
   * `committedForTurn`'s caller does) may claim it as it stores it (event-queue.ts `claimsAsStored`);
   * undefined when it may not.
   */
  claimTermsAsStored(bot: BotRef): { owner: string; leaseUntil: string } | undefined {
    return this.queueWatch.termsOfClaimAsStored(bot.workspaceId);
  }

  /**
   * `committedForTurn` after a statement that may have claimed the event as it stored it (`stored`, the
   * row it answered): no claim of its own when it did, and neither claim nor notice when the statement
   * held a turn of the conversation that runs (`behindTurn`, event-queue.ts `runningTurnsIn`): the
   * turn's end claims it, as the next of its conversation.
   */
  async storedForTurn(
    bot: BotRef,
    eventId: string,
    stored: Row<'events'> | undefined,
    behindTurn: boolean,
  ): Promise<QueuedNotice | undefined> {
    const claimed = stored && this.queueWatch.claimedAsStored(stored);
    if (claimed) return noticeOf(eventId, bot.workspaceId, claimed);
    if (behindTurn) return undefined;
    return this.committedForTurn(bot, eventId);
  }

  private async claimForTurn(bot: BotRef, eventId: string, db: Executor): Promise<QueuedNotice> {
    const claimed = await this.queueWatch.claimAtInsert(db, eventId, bot.workspaceId);
    return noticeOf(eventId, bot.workspaceId, claimed);
  }

  /** Stores an event for the bot: `pending` (queued now) or `scheduled` (queued when due). */
  async queue(botId: string, event: QueuedEvent, db: Executor = this.db, stamped?: string): Promise<Event> {
    const row = await this.rowOf(botId, event, db, stamped);
    await insertEvent.execute(db, row);
    const stored = toEvent(row);
    // A scheduled event goes out when it fires (fireDue).
    if (row.status === 'pending') await this.outbox.fanOut(db, botId, stored);
    return stored;
  }

  /** The row of an event to queue, stamped in its conversation (see `stamp`) unless `stamped` was. */
  private async rowOf(
    botId: string,
    event: QueuedEvent,
    db: Executor,
    stamped?: string,
  ): Promise<NewEventRow> {
    const { conversationId } = event;
    const now = nowIso();
    const queuedAt =
      conversationId === undefined || event.scheduledFor !== undefined
        ? now
        : (stamped ?? (await this.stamp(db, conversationId, now)));
    return eventRow(botId, event, queuedAt);
  }

  /**
   * The instant a pending event of the conversation is queued at: after the last one queued in it, taken
   * by the statement that takes the conversation's row (held until `db`'s transaction ends). A
   * conversation's events are then ordered as their transactions stored them, whatever order their
   * clocks were read in, so no claim finds an older event committed after it claimed a newer one
   * (event-queue.ts `claimable`). Messages stamp as they count themselves (messages.ts).
   */
  private async stamp(db: Executor, conversationId: string, now: string): Promise<string> {
    const row = await db
      .updateTable('conversations')
      .set({ last_event_at: this.store.sql.instantAfter(sql.ref('last_event_at'), sql`${now}`) })
      .where('id', '=', conversationId)
      .returning('last_event_at')
      .executeTakeFirst();
    return row?.last_event_at ?? now;
  }

  /**
   * An event created through the Runtime API, by the bot (or an integration acting for it: its event
   * reaches the bot as `<alias>:<type>`, as the hosted platform names it, which is what an SDK bot's
   * `bot.on.event('<alias>:<type>')` waits for).
   */
  async create(actor: BotActor, body: CreateEventBody): Promise<Event> {
    const { integration } = actor;
    const type =
      integration === undefined || body.type.startsWith(`${integration}:`)
        ? body.type
        : `${integration}:${body.type}`;
    const scheduledFor = scheduleTime(body.schedule);
    if (body.conversationId !== undefined)
      await requireOfBot(this.db, 'conversations', actor, body.conversationId);
    if (body.userId !== undefined) await requireOfBot(this.db, 'users', actor, body.userId);
    if (body.messageId !== undefined) await requireOfBot(this.db, 'messages', actor, body.messageId);
    return this.createFrom(actor, { ...body, type, ...(scheduledFor && { scheduledFor }), isBot: true });
  }

  /**
   * Queues an event for the bot and, unless it waits for its schedule, shows it to the listeners of
   * its conversation as coming from the bot (`isBot`) or from the user.
   */
  async createFrom(
    actor: BotActor,
    event: QueuedEvent & { isBot: boolean },
    /** What admission let in as the request arrived (`enter`). */
    entry?: AdmissionEntry,
  ): Promise<Event> {
    const { isBot, ...queued } = event;
    const { created, notices, signal } = await this.db.transaction().execute(async (trx) => {
      if (queued.scheduledFor) return { created: await this.queue(actor.botId, queued, trx), notices: [] };
      const stored = await this.queueForTurn(actor, queued, trx, undefined, entry);
      const recorded = await this.recordSignal(trx, actor.botId, stored.event, isBot);
      const heard =
        queued.workflowId === undefined
          ? undefined
          : await this.workflows?.heard(trx, actor, queued.workflowId, false);
      return {
        created: stored.event,
        notices: heard ? [stored.notice, heard] : [stored.notice],
        signal: recorded,
      };
    });
    if (signal) this.log.publish([signal]);
    if (notices.length > 0) this.notifyQueued(notices);
    return created;
  }

  async get(actor: BotActor, eventId: string): Promise<Event> {
    const row = await this.db
      .selectFrom('events')
      .selectAll()
      .where('id', '=', eventId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    if (!row) throw notFound('Event', eventId);
    return toEvent(row);
  }

  async list(actor: BotActor, query: ListEventsQuery): Promise<Page<Event>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select = this.db.selectFrom('events').selectAll().where('bot_id', '=', actor.botId);
    if (query.type !== undefined) select = select.where('type', '=', query.type);
    if (query.conversationId !== undefined)
      select = select.where('conversation_id', '=', query.conversationId);
    if (query.userId !== undefined) select = select.where('user_id', '=', query.userId);
    if (query.messageId !== undefined) select = select.where('message_id', '=', query.messageId);
    if (query.workflowId !== undefined) select = select.where('workflow_id', '=', query.workflowId);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
    return { ...page, items: page.items.map(toEvent) };
  }

  async cancelScheduled(actor: BotActor, eventId: string): Promise<void> {
    const event = await this.get(actor, eventId);
    const result = await this.db
      .updateTable('events')
      .set({ status: 'canceled', updated_at: nowIso() })
      .where('id', '=', eventId)
      .where('status', '=', 'scheduled')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      throw invalidPayload(`Event "${eventId}" is ${event.status}, not scheduled: it cannot be canceled`);
    }
  }

  /**
   * Queues every scheduled event that is due. The status change is one conditional UPDATE, so an
   * event fires once even when several processes sweep at the same moment.
   */
  async fireDue(now = nowIso()): Promise<number> {
    const due = await this.db
      .selectFrom('events')
      .select('id')
      // A literal, not a parameter: only then may the store use its index of scheduled events.
      .where('status', '=', sql.lit('scheduled'))
      .where('scheduled_for', '<=', now)
      .orderBy('scheduled_for')
      .limit(500)
      .execute();
    let fired = 0;
    for (const { id } of due) {
      const result = await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('events')
          .set({ status: 'pending', updated_at: nowIso() })
          .where('id', '=', id)
          .where('status', '=', 'scheduled')
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        const event = toEvent(row);
        await this.outbox.fanOut(trx, row.bot_id, event);
        if (row.workflow_id !== null) {
          const bot = { botId: row.bot_id, workspaceId: row.workspace_id };
          await this.workflows?.heard(trx, bot, row.workflow_id, true);
        }
        return { signal: await this.recordSignal(trx, row.bot_id, event, true) };
      });
      if (result) {
        fired++;
        if (result.signal) this.log.publish([result.signal]);
      }
    }
    if (fired > 0) this.queueWatch.notify();
    return fired;
  }

  /** An event in a conversation reaches its live listeners (from the user, or from the bot: `isBot`). */
  async recordSignal(
    db: Executor,
    botId: string,
    event: Event,
    isBot: boolean,
  ): Promise<RecordedSignal | undefined> {
    if (!event.conversationId) return undefined;
    return this.log.record(db, event.conversationId, {
      type: 'event_created',
      event: {
        id: event.id,
        createdAt: event.createdAt,
        type: event.type,
        payload: event.payload,
        userId: event.userId ?? botId,
      },
      isBot,
    });
  }
}

/** The due time of a schedule, or undefined when there is none. */
export function scheduleTime(schedule: Static<typeof ScheduleSchema> | undefined): string | undefined {
  if (!schedule) return undefined;
  if (schedule.dateTime !== undefined) {
    const time = new Date(schedule.dateTime);
    if (Number.isNaN(time.getTime())) throw invalidPayload('schedule.dateTime must be an ISO 8601 date-time');
    return time.toISOString();
  }
  if (schedule.delay !== undefined) return new Date(Date.now() + schedule.delay).toISOString();
  throw invalidPayload('schedule needs dateTime or delay');
}
