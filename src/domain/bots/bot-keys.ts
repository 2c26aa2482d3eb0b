import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db, StoreSql } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { requireRole } from '../workspace/roles.ts';
import { nowIso } from '../shared/time.ts';
import { hashToken, newToken } from '../workspace/tokens.ts';

/** This server process, as the owner of the keys it makes for bundles' processes. */
const PROCESS_OWNER = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

export interface BotApiKey {
  id: string;
  createdAt: string;
  note: string;
}

/** Bot API keys ("baks"): a bearer credential for one bot on the Runtime, Files and Tables APIs. */
export class BotKeys {
  constructor(
    private readonly db: Db,
    private readonly caches: Caches,
    private readonly storeSql: StoreSql,
  ) {}

  async create(actor: WorkspaceActor, botId: string, note: string): Promise<BotApiKey & { value: string }> {
    requireRole(actor.role, 'botKeys.manage');
    await requireBotOfWorkspace(this.db, actor, botId);
    return this.insert(botId, note);
  }

  /**
   * A key for a process of the server's own that runs the bot's code (an SDK bundle's `BP_TOKEN`):
   * no member makes it, and it is deleted when the process ends.
   */
  createForRuntime(
    botId: string,
    note: string,
    integration?: { id: string; alias: string },
  ): Promise<BotApiKey & { value: string }> {
    return this.insert(botId, note, integration, PROCESS_OWNER);
  }

  /**
   * At start, when this process alone uses the database: the keys an earlier run made for its bundles'
   * processes, which it could not delete if it died; no process holds them now.
   */
  async deleteStaleRuntimeKeys(): Promise<number> {
    if (!this.storeSql.oneProcess) return 0;
    const deleted = await this.db
      .deleteFrom('bot_api_keys')
      .where('process_owner', 'is not', null)
      .where('process_owner', '!=', PROCESS_OWNER)
      .executeTakeFirst();
    this.caches.accessChanged();
    return Number(deleted.numDeletedRows);
  }

  deleteForRuntime(keyId: string): Promise<void> {
    return this.remove(keyId);
  }

  async list(actor: WorkspaceActor, botId: string): Promise<BotApiKey[]> {
    requireRole(actor.role, 'botKeys.manage');
    await requireBotOfWorkspace(this.db, actor, botId);
    const rows = await this.db
      .selectFrom('bot_api_keys')
      .select(['id', 'created_at', 'note'])
      .where('bot_id', '=', botId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, createdAt: r.created_at, note: r.note }));
  }

  async delete(actor: WorkspaceActor, keyId: string): Promise<void> {
    requireRole(actor.role, 'botKeys.manage');
    const row = await this.db
      .selectFrom('bot_api_keys')
      .innerJoin('bots', 'bots.id', 'bot_api_keys.bot_id')
      .select('bot_api_keys.id')
      .where('bot_api_keys.id', '=', keyId)
      .where('bots.workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound('Bot API key', keyId);
    await this.remove(keyId);
  }

  private async insert(
    botId: string,
    note: string,
    integration?: { id: string; alias: string },
    processOwner?: string,
  ): Promise<BotApiKey & { value: string }> {
    const value = newToken('botApiKey');
    const row = {
      id: newId('botApiKey'),
      bot_id: botId,
      integration_id: integration?.id ?? null,
      integration_alias: integration?.alias ?? null,
      process_owner: processOwner ?? null,
      note,
      token_hash: hashToken(value),
      created_at: nowIso(),
    };
    await this.db.insertInto('bot_api_keys').values(row).execute();
    return { id: row.id, createdAt: row.created_at, note, value };
  }

  private async remove(keyId: string): Promise<void> {
    await this.db.deleteFrom('bot_api_keys').where('id', '=', keyId).execute();
    this.caches.accessChanged();
  }
}
