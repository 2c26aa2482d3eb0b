import type { Db } from '../../store/index.ts';
import { TtlMap } from '../shared/caches.ts';
import { invalidPayload } from '../shared/errors.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { nowIso } from '../shared/time.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import type { BotModels as BotModelsAnswer, UpdateBotModelsBody } from './provider-schemas.ts';

/** A bot's `best` and `fast`, as `<provider>:<model>`; null: the server's. */
export interface ModelChoices {
  best: string | null;
  fast: string | null;
}

const SERVER_CHOICES: ModelChoices = { best: null, fast: null };

/**
 * The models a bot chose for `best` (and `auto`) and `fast`, over the server's: any model of the
 * server's provider or of its workspace's. `catalog` lists the `<provider>:<model>` references a bot
 * of a workspace may choose from (the gateway's).
 */
export class BotModels {
  /** Bot id -> its choices, as the gateway reads them on each call (read at most every two seconds). */
  private readonly choices = new TtlMap<ModelChoices>();

  constructor(
    private readonly db: Db,
    private readonly catalog: (workspaceId: string) => Promise<string[]>,
  ) {}

  async get(actor: WorkspaceActor, botId: string): Promise<BotModelsAnswer> {
    await requireBotOfWorkspace(this.db, actor, botId);
    const [choices, available] = await Promise.all([this.read(botId), this.catalog(actor.workspaceId)]);
    return { ...choices, available };
  }

  /** A model that is not in the catalog is refused: a typo would otherwise fail every call of the bot. */
  async update(actor: WorkspaceActor, botId: string, body: UpdateBotModelsBody): Promise<BotModelsAnswer> {
    requireRole(actor.role, 'bots.write');
    await requireBotOfWorkspace(this.db, actor, botId);
    const available = await this.catalog(actor.workspaceId);
    for (const selector of ['best', 'fast'] as const) {
      const ref = body[selector];
      if (ref !== undefined && ref !== null && !available.includes(ref)) {
        throw invalidPayload(
          `${selector}: "${ref}" is no model of the server’s provider nor of the workspace’s (getBotModels lists them)`,
        );
      }
    }
    const current = await this.read(botId);
    const next: ModelChoices = {
      best: body.best === undefined ? current.best : body.best,
      fast: body.fast === undefined ? current.fast : body.fast,
    };
    const now = nowIso();
    await this.db
      .insertInto('bot_llm_models')
      .values({ bot_id: botId, ...next, updated_at: now })
      .onConflict((oc) => oc.column('bot_id').doUpdateSet({ ...next, updated_at: now }))
      .execute();
    this.choices.delete(botId);
    return { ...next, available };
  }

  /** The bot's choices, as the gateway routes `best` and `fast`. */
  async of(botId: string): Promise<ModelChoices> {
    return this.choices.through(botId, () => this.read(botId));
  }

  private async read(botId: string): Promise<ModelChoices> {
    const row = await this.db
      .selectFrom('bot_llm_models')
      .select(['best', 'fast'])
      .where('bot_id', '=', botId)
      .executeTakeFirst();
    return row ?? SERVER_CHOICES;
  }
}
