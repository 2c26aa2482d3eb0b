import type { Executor, Store } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { PreparedShapes } from '../../store/prepared.ts';
import type { EventQueue } from '../queue/event-queue.ts';
import type { BotActor } from '../workspace/actors.ts';
import { notFound, payloadTooLarge } from '../shared/errors.ts';
import type { Events } from './events.ts';
import { newId } from '../shared/ids.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { fromJson, toJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/schemas.ts';
import { nowIso } from '../shared/time.ts';
import type { State } from './schemas.ts';
import type { StateType } from '../../value-sets.ts';

/** A state to store: where, and what. */
export interface StateEntry {
  key: StateKey;
  payload: object;
  /** The payload's JSON, when the caller has it already. */
  text?: string;
}

/** Largest state payload, as serialised JSON. */
export const STATE_PAYLOAD_LIMIT = 128 * 1024;

export interface StateKey {
  type: StateType;
  id: string;
  name: string;
}

const OWNER_TABLES = { conversation: 'conversations', user: 'users', workflow: 'workflows' } as const;

function toState(row: Row<'states'>): State {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    botId: row.bot_id,
    ...(row.type === 'conversation' && { conversationId: row.resource_id }),
    ...(row.type === 'user' && { userId: row.resource_id }),
    name: row.name,
    type: row.type,
    payload: fromJson<JsonObject>(row.payload),
    ...(row.expiry !== null && { expiry: Number(row.expiry) }),
    ...(row.expires_at !== null && { expiresAt: row.expires_at }),
  };
}

function expiresAt(expiry: number | null | undefined): string | null {
  return expiry === null || expiry === undefined ? null : new Date(Date.now() + expiry).toISOString();
}

/** A state's key as text: `type/id/name`. */
export function stateKeyText(key: StateKey): string {
  return `${key.type}/${key.id}/${key.name}`;
}

/** Removes every state of one conversation, user or workflow: they go with what they belong to. */
export async function deleteStatesOf(
  db: Executor,
  botId: string,
  type: StateType,
  resourceId: string,
): Promise<void> {
  await db
    .deleteFrom('states')
    .where('bot_id', '=', botId)
    .where('type', '=', type)
    .where('resource_id', '=', resourceId)
    .execute();
}

/** The arguments of a write of states: the bot, the instant, and each row's id, resource, name and payload. */
type WriteArgs = Record<string, string>;

/** The rows of a write of states of `types` (a state already there keeps its expiry: see `upsertOf`). */
function rowsOf(a: WriteArgs, types: StateType[]): Row<'states'>[] {
  const now = a.now ?? '';
  return types.map((type, i) => ({
    id: a[`id${i}`] ?? '',
    bot_id: a.botId ?? '',
    type,
    resource_id: a[`resource${i}`] ?? '',
    name: a[`name${i}`] ?? '',
    payload: a[`payload${i}`] ?? '',
    expiry: null,
    expires_at: null,
    created_at: now,
    updated_at: now,
  }));
}

/** The upsert of `States.write`, to run on its own or with another statement. */
function upsertOf(db: Executor, rows: Row<'states'>[]) {
  return db
    .insertInto('states')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['bot_id', 'type', 'resource_id', 'name']).doUpdateSet((eb) => ({
        payload: eb.ref('excluded.payload'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    );
}

/** Named JSON documents attached to a conversation, user, workflow, the bot itself, ... */
export class States {
  /**
   * The statements writing a turn's states, one for each shape (how many, of which types; and how the
   * turn ended), built and compiled once instead of through the query builder every time.
   */
  private readonly upserts = new PreparedShapes<WriteArgs, unknown>(64);
  private readonly turnEnds = new PreparedShapes<WriteArgs, unknown>(64);

  constructor(
    private readonly store: Store,
    private readonly events: Events,
    private readonly queue: EventQueue,
  ) {}

  /**
   * The expiry a new state takes when its writer names none: the one the bot's definition gives a state
   * of that name and type (`states.<name>.expiry`, as SDK bots declare them), else none.
   */
  private async expiryOf(
    actor: BotActor,
    key: StateKey,
    given: number | null | undefined,
    trx: Executor,
  ): Promise<number | null> {
    if (given !== undefined) return given;
    // In the caller's transaction: SQLite's one connection would wait for it to end. Read only when a new
    // state names no expiry, so never on the bot runtime's own writes.
    const row = await trx
      .selectFrom('bots')
      .select('definition')
      .where('id', '=', actor.botId)
      .executeTakeFirst();
    const states = row
      ? (fromJson<{ states?: Record<string, { type: string; expiry?: number }> }>(row.definition).states ??
        {})
      : {};
    const defined = Object.hasOwn(states, key.name) ? states[key.name] : undefined;
    return defined?.type === key.type ? (defined.expiry ?? null) : null;
  }

  private get db() {
    return this.store.db;
  }

  /**
   * Payloads of several states of a bot in one query (the bot runtime reads a turn's variables this way).
   * Keyed `type/id/name`; missing and expired states are absent.
   */
  async readMany(actor: BotActor, keys: StateKey[]): Promise<Map<string, JsonObject>> {
    if (keys.length === 0) return new Map();
    return payloadsOf(await this.readManyQuery(actor.botId, keys).execute());
  }

  /** The query of `readMany` (`keys` not empty), for a caller that reads the states with other records. */
  readManyQuery(botId: string, keys: StateKey[]) {
    // The bot in every term, not once beside them: SQLite then looks each key up in the states' unique
    // index; with it outside, it walked all of the bot's states (a turn's read grew with its users).
    return this.db
      .selectFrom('states')
      .select(READ_STATE_COLUMNS)
      .where((eb) =>
        eb.or(
          keys.map((k) =>
            eb.and([
              eb('bot_id', '=', botId),
              eb('type', '=', k.type),
              eb('resource_id', '=', k.id),
              eb('name', '=', k.name),
            ]),
          ),
        ),
      );
  }

  /**
   * Stores payloads in one statement, keeping each state's expiry: for the bot runtime's own states
   * (variables, dialog), whose owners the runtime has already checked.
   */
  async write(actor: BotActor, entries: StateEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { args, types } = this.writeArgs(actor, entries);
    const upsert = this.upserts.of(types.join(','), Object.keys(args), (db, a) =>
      upsertOf(db, rowsOf(a, types)),
    );
    await upsert.execute(this.db, args);
  }

  /**
   * A turn's last write: the states it changed, then the end of its event (on Postgres in one statement:
   * see `EventQueue.finishWith`).
   */
  async writeAtTurnEnd(
    actor: BotActor,
    entries: StateEntry[],
    eventId: string,
    status: 'processed' | 'ignored',
  ): Promise<void> {
    if (entries.length === 0) return this.queue.finishWith(eventId, status, undefined);
    const { args, types } = this.writeArgs(actor, entries);
    if (this.store.sql.writeViews) {
      // One statement where the store's view writes both (`StoreSql.writeViews`): the first row ends the event.
      const ending = this.turnEnds.of(
        `${status}:${types.join(',')}`,
        [...Object.keys(args), 'eventId'],
        (db, a) =>
          db.insertInto('state_writes').values(
            rowsOf(a, types).map((row, i) => ({
              ...row,
              ends_event: i === 0 ? (a.eventId ?? '') : null,
              ends_status: i === 0 ? status : null,
            })),
          ),
      );
      await ending.execute(this.db, { ...args, eventId });
      return;
    }
    await this.queue.finishWith(eventId, status, (db) => upsertOf(db, rowsOf(args, types)));
  }

  /** The arguments of a write of entries as `rowsOf` makes their rows, and their types (its shape). */
  private writeArgs(actor: BotActor, entries: StateEntry[]): { args: WriteArgs; types: StateType[] } {
    const args: WriteArgs = { botId: actor.botId, now: nowIso() };
    entries.forEach(({ key, payload, text }, i) => {
      args[`id${i}`] = newId('state');
      args[`resource${i}`] = key.id;
      args[`name${i}`] = key.name;
      args[`payload${i}`] = this.serialise(payload, text);
    });
    return { args, types: entries.map((entry) => entry.key.type) };
  }

  /** A state past its expiry is gone, whether or not the sweeper has removed it yet. */
  async get(actor: BotActor, key: StateKey, db: Executor = this.db): Promise<State> {
    const row = await this.findRow(actor, key, db);
    if (!row) throw notFound('State', `${key.type}/${key.id}/${key.name}`);
    return toState(row);
  }

  /**
   * Sets the payload; `expiry` undefined keeps the current one. A `null` payload deletes the state
   * and answers what it was.
   */
  async set(
    actor: BotActor,
    key: StateKey,
    payload: JsonObject | null,
    expiry: number | null | undefined,
  ): Promise<State> {
    await this.requireOwner(actor, key);
    if (payload === null) {
      const state = await this.get(actor, key);
      await this.remove(actor, key);
      return state;
    }
    const text = this.serialise(payload);
    return this.db.transaction().execute(async (trx) => {
      const current = await this.findRow(actor, key, trx, true);
      const now = nowIso();
      if (current) {
        const next: Row<'states'> = {
          ...current,
          payload: text,
          ...(expiry !== undefined && { expiry, expires_at: expiresAt(expiry) }),
          updated_at: now,
        };
        await trx.updateTable('states').set(next).where('id', '=', current.id).execute();
        return toState(next);
      }
      return this.insert(actor, key, text, await this.expiryOf(actor, key, expiry, trx), trx);
    });
  }

  async getOrSet(
    actor: BotActor,
    key: StateKey,
    payload: JsonObject,
    expiry: number | null | undefined,
  ): Promise<{ state: State; cached: boolean }> {
    await this.requireOwner(actor, key);
    const text = this.serialise(payload);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const current = await this.findRow(actor, key, trx);
        if (current) return { state: toState(current), cached: true };
        const created = await this.insert(
          actor,
          key,
          text,
          await this.expiryOf(actor, key, expiry, trx),
          trx,
        );
        return { state: created, cached: false };
      });
    } catch (err) {
      // Another caller created it meanwhile: theirs is the state.
      if (isUniqueViolation(err)) return { state: await this.get(actor, key), cached: true };
      throw err;
    }
  }

  /** Shallow merge of `payload` into the current payload. */
  async patch(
    actor: BotActor,
    key: StateKey,
    payload: JsonObject,
    expiry: number | null | undefined,
  ): Promise<State> {
    await this.requireOwner(actor, key);
    return this.db.transaction().execute(async (trx) => {
      const current = await this.findRow(actor, key, trx, true);
      if (!current) throw notFound('State', `${key.type}/${key.id}/${key.name}`);
      const next: Row<'states'> = {
        ...current,
        payload: this.serialise({ ...fromJson<JsonObject>(current.payload), ...payload }),
        ...(expiry !== undefined && { expiry, expires_at: expiresAt(expiry) }),
        updated_at: nowIso(),
      };
      await trx.updateTable('states').set(next).where('id', '=', current.id).execute();
      return toState(next);
    });
  }

  async setExpiry(actor: BotActor, key: StateKey, expiry: number | null): Promise<State> {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.findRow(actor, key, trx, true);
      if (!current) throw notFound('State', `${key.type}/${key.id}/${key.name}`);
      const next: Row<'states'> = { ...current, expiry, expires_at: expiresAt(expiry), updated_at: nowIso() };
      await trx.updateTable('states').set(next).where('id', '=', current.id).execute();
      return toState(next);
    });
  }

  /**
   * Removes every expired state and queues a `state_expired` event for its bot. Each state is
   * deleted by id in the transaction that queues its event, so it expires once across processes.
   */
  async expireDue(now = nowIso()): Promise<number> {
    const due = await this.db
      .selectFrom('states')
      .selectAll()
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .limit(500)
      .execute();
    let expired = 0;
    for (const row of due) {
      const gone = await this.db.transaction().execute(async (trx) => {
        const result = await trx
          .deleteFrom('states')
          .where('id', '=', row.id)
          .where('expires_at', '<=', now)
          .executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        const state = toState(row);
        await this.events.queue(
          row.bot_id,
          {
            type: 'state_expired',
            payload: { state },
            ...(state.conversationId !== undefined && { conversationId: state.conversationId }),
            ...(state.userId !== undefined && { userId: state.userId }),
          },
          trx,
        );
        return true;
      });
      if (gone) expired++;
    }
    if (expired > 0) this.events.notifyQueued();
    return expired;
  }

  private async remove(actor: BotActor, key: StateKey): Promise<void> {
    await this.db
      .deleteFrom('states')
      .where('bot_id', '=', actor.botId)
      .where('type', '=', key.type)
      .where('resource_id', '=', key.id)
      .where('name', '=', key.name)
      .execute();
  }

  private async insert(
    actor: BotActor,
    key: StateKey,
    payload: string,
    expiry: number | null,
    trx: Executor,
  ): Promise<State> {
    const now = nowIso();
    const row: Row<'states'> = {
      id: newId('state'),
      bot_id: actor.botId,
      type: key.type,
      resource_id: key.id,
      name: key.name,
      payload,
      expiry,
      expires_at: expiresAt(expiry),
      created_at: now,
      updated_at: now,
    };
    // An expired row the sweeper has not reached yet gives way to the new state.
    await trx
      .deleteFrom('states')
      .where('bot_id', '=', actor.botId)
      .where('type', '=', key.type)
      .where('resource_id', '=', key.id)
      .where('name', '=', key.name)
      .execute();
    await trx.insertInto('states').values(row).execute();
    return toState(row);
  }

  private serialise(payload: object, serialised?: string): string {
    const text = serialised ?? toJson(payload);
    if (Buffer.byteLength(text) > STATE_PAYLOAD_LIMIT) {
      throw payloadTooLarge(`A state payload is limited to ${STATE_PAYLOAD_LIMIT / 1024} KB`);
    }
    return text;
  }

  /**
   * The state's row, unless it expired. `held`: the transaction rewrites it, so it is held until that
   * ends (a patch or expiry set meanwhile is waited for and kept, never overwritten).
   */
  private async findRow(
    actor: BotActor,
    key: StateKey,
    db: Executor,
    held = false,
  ): Promise<Row<'states'> | undefined> {
    const row = await db
      .selectFrom('states')
      .selectAll()
      .where('bot_id', '=', actor.botId)
      .where('type', '=', key.type)
      .where('resource_id', '=', key.id)
      .where('name', '=', key.name)
      .$if(held, (q) => q.modifyEnd(this.store.sql.heldRows))
      .executeTakeFirst();
    if (!row || (row.expires_at !== null && row.expires_at <= nowIso())) return undefined;
    return row;
  }

  /** States hang off something of this bot: its conversations, users, workflows, or the bot itself. */
  private async requireOwner(actor: BotActor, key: StateKey): Promise<void> {
    if (key.type === 'bot') {
      if (key.id !== actor.botId) throw notFound('Bot', key.id);
      return;
    }
    if (key.type !== 'conversation' && key.type !== 'user' && key.type !== 'workflow') return;
    await requireOfBot(this.db, OWNER_TABLES[key.type], actor, key.id);
  }
}

/** What `readManyQuery` reads of a state. */
export const READ_STATE_COLUMNS = ['type', 'resource_id', 'name', 'payload', 'expires_at'] as const;

/** A state as `readManyQuery` reads it. */
export type ReadState = Pick<Row<'states'>, (typeof READ_STATE_COLUMNS)[number]>;

/** The payloads of states read, keyed `type/id/name`, without the expired ones. */
export function payloadsOf(rows: readonly ReadState[], now = nowIso()): Map<string, JsonObject> {
  const found = new Map<string, JsonObject>();
  for (const row of rows) {
    if (row.expires_at !== null && row.expires_at <= now) continue;
    found.set(stateKeyText({ type: row.type, id: row.resource_id, name: row.name }), fromJson(row.payload));
  }
  return found;
}
