import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import { requireRole } from '../workspace/roles.ts';
import { tableRecord } from '../tables/record.ts';
import { tableSchema } from '../tables/columns.ts';
import type { BotVersion } from './schemas.ts';
import type { PackageDefinition } from './package-format.ts';
import type { BotRuntime } from '../../value-sets.ts';

// Every deploy of a bot's code (`parley deploy`, `bp deploy`, a console's deploy: an updateBot or
// createBot with `code`) makes a version in its own transaction, and `createBotVersion` makes one of
// what the bot runs now: the code, the definition and the bot's tables' schemas, who made it and when,
// never changed after. `deployBotVersion` (Bots.deployVersion) makes the bot run one of them again.

/** What a version keeps of the bot when it is made. */
export interface VersionContent {
  code: string;
  runtime: Row<'bots'>['runtime'];
  /** The bot's definition (`bots.definition`), JSON. */
  definition: string;
}

export interface VersionNote {
  /** The version's name; `v<number>` when none is given. */
  name?: string;
  description?: string;
  createdBy: string | null;
}

/**
 * Records a version of the bot's code in `trx` (the deploy's transaction, which has written the bot's
 * row: a deploy beside it waits for its commit) and answers it. Its number is one past the bot's last.
 */
export async function recordVersion(
  trx: Executor,
  botId: string,
  content: VersionContent,
  note: VersionNote,
): Promise<Row<'bot_versions'>> {
  const last = await trx
    .selectFrom('bot_versions')
    .select((eb) => eb.fn.max('number').as('number'))
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  const number = Number(last?.number ?? 0) + 1;
  const tables = await trx
    .selectFrom('tables')
    .selectAll()
    .where('bot_id', '=', botId)
    .orderBy('name')
    .execute();
  const row: Row<'bot_versions'> = {
    id: newId('botVersion'),
    bot_id: botId,
    number,
    name: note.name ?? `v${number}`,
    description: note.description ?? null,
    code: content.code,
    runtime: content.runtime,
    definition: content.definition,
    tables: JSON.stringify(
      Object.fromEntries(
        tables.map((row) => {
          const table = tableRecord(row);
          return [table.name, { schema: tableSchema(table.columns), keyColumn: table.keyColumn }];
        }),
      ),
    ),
    created_by: note.createdBy,
    created_at: nowIso(),
  };
  await trx.insertInto('bot_versions').values(row).execute();
  return row;
}

/** The version `versionId` of the bot, or 404. */
export async function requireVersion(
  db: Executor,
  botId: string,
  versionId: string,
): Promise<Row<'bot_versions'>> {
  const row = await db
    .selectFrom('bot_versions')
    .selectAll()
    .where('id', '=', versionId)
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  if (!row) throw notFound('BotVersion', versionId);
  return row;
}

export function versionView(
  row: Omit<Row<'bot_versions'>, 'code' | 'definition' | 'tables'>,
  deployedId: string | null,
): BotVersion {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null && { description: row.description }),
    number: row.number,
    createdAt: row.created_at,
    ...(row.created_by !== null && { createdBy: row.created_by }),
    runtime: row.runtime,
    deployed: row.id === deployedId,
  };
}

/** The versions of a workspace's bots: listed, read, and made of what a bot runs now. */
export class BotVersions {
  constructor(private readonly db: Db) {}

  /** The bot's versions, newest first (a bot keeps every one until it is deleted). */
  async list(actor: WorkspaceActor, botId: string): Promise<BotVersion[]> {
    const bot = await this.requireBot(actor, botId);
    const rows = await this.db
      .selectFrom('bot_versions')
      .select(['id', 'bot_id', 'number', 'name', 'description', 'runtime', 'created_by', 'created_at'])
      .where('bot_id', '=', botId)
      .orderBy('number', 'desc')
      .execute();
    return rows.map((row) => versionView(row, bot.version_id));
  }

  /**
   * A version, with `url`: where to download all it keeps (code, definition, tables' schemas) as one
   * JSON document. The hosted API answers a link to storage; here the document is the link itself, a
   * `data:` URL, so it needs no other route and no credentials to read.
   */
  async get(
    actor: WorkspaceActor,
    botId: string,
    versionId: string,
  ): Promise<{ url: string; version: BotVersion }> {
    const bot = await this.requireBot(actor, botId);
    const row = await requireVersion(this.db, botId, versionId);
    const version = versionView(row, bot.version_id);
    const document = {
      ...version,
      botId,
      code: row.code,
      definition: JSON.parse(row.definition) as unknown,
      tables: JSON.parse(row.tables) as unknown,
    };
    const url = `data:application/json;base64,${Buffer.from(JSON.stringify(document)).toString('base64')}`;
    return { url, version };
  }

  /**
   * The definition of the Parley package the bot runs (or its version `versionId` keeps), without the
   * compiled code: what the console draws the bot's flows from. A bundle, or no code, has none.
   */
  async definition(
    actor: WorkspaceActor,
    botId: string,
    versionId?: string,
  ): Promise<{ runtime: BotRuntime | null; versionId?: string; package?: PackageDefinition }> {
    const bot = await this.requireBot(actor, botId);
    const source = versionId === undefined ? bot : await requireVersion(this.db, botId, versionId);
    const id = versionId ?? bot.version_id;
    const answer = { runtime: source.runtime, ...(id !== null && { versionId: id }) };
    if (source.runtime !== 'parley' || source.code === null) return answer;
    // A `parley` runtime's code passed the package's check (the PackageCheck) when it was deployed.
    const { manifest, actions, workflows, knowledge, tables } = JSON.parse(source.code) as PackageDefinition;
    return {
      ...answer,
      package: {
        manifest,
        actions,
        workflows,
        ...(knowledge !== undefined && { knowledge }),
        ...(tables !== undefined && { tables }),
      },
    };
  }

  /** A version of what the bot runs now (its code and definition, its tables), under `name`. */
  async create(
    actor: WorkspaceActor,
    botId: string,
    body: { name: string; description?: string },
  ): Promise<BotVersion> {
    requireRole(actor.role, 'bots.write');
    return this.db.transaction().execute(async (trx) => {
      // Locks the bot's row until the commit (a write that changes nothing), so that a deploy beside this
      // one numbers its version after it.
      await trx
        .updateTable('bots')
        .set((eb) => ({ version_id: eb.ref('version_id') }))
        .where('id', '=', botId)
        .execute();
      const bot = await this.requireBot(actor, botId, trx);
      if (bot.code === null || bot.runtime === null)
        throw invalidPayload(`Bot ${botId} has no code deployed: there is nothing to keep as a version`);
      const row = await recordVersion(
        trx,
        botId,
        { code: bot.code, runtime: bot.runtime, definition: bot.definition },
        {
          name: body.name,
          ...(body.description !== undefined && { description: body.description }),
          createdBy: actor.accountId,
        },
      );
      // The bot runs exactly what it keeps: this version is the one deployed now.
      await trx.updateTable('bots').set({ version_id: row.id }).where('id', '=', botId).execute();
      return versionView(row, row.id);
    });
  }

  /** A bot of another workspace does not exist for this actor. */
  private async requireBot(
    actor: WorkspaceActor,
    botId: string,
    db: Executor = this.db,
  ): Promise<Pick<Row<'bots'>, 'code' | 'runtime' | 'definition' | 'version_id'>> {
    const row = await db
      .selectFrom('bots')
      .select(['code', 'runtime', 'definition', 'version_id'])
      .where('id', '=', botId)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound('Bot', botId);
    return row;
  }
}
