import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { Links } from '../bots/links.ts';
import { notFound } from '../shared/errors.ts';
import { isWebhookId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import type { BotWebhook, UpdateBotWebhookBody } from './schemas.ts';
import type { WebhookVerification } from '../../value-sets.ts';

/** What the ingress needs of the bot a webhook id names. */
export interface ReachedWebhook {
  botId: string;
  workspaceId: string;
  verification: WebhookVerification;
  signingSecret: string;
}

/** Each bot's webhook ingress: its URL, and how the requests it takes are verified. */
export class BotWebhooks {
  constructor(
    private readonly db: Db,
    private readonly links: Links,
  ) {}

  /** Made with the bot, in its transaction. */
  async create(db: Executor, botId: string): Promise<void> {
    const now = nowIso();
    await db
      .insertInto('bot_webhooks')
      .values({
        bot_id: botId,
        webhook_id: randomUUID(),
        verification: 'standard-webhooks',
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async get(actor: WorkspaceActor, botId: string): Promise<BotWebhook> {
    return this.toWebhook(await this.requireRow(actor, botId));
  }

  async update(actor: WorkspaceActor, botId: string, body: UpdateBotWebhookBody): Promise<BotWebhook> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, botId);
    await this.db
      .updateTable('bot_webhooks')
      .set({
        ...(body.verification !== undefined && { verification: body.verification }),
        updated_at: nowIso(),
      })
      .where('bot_id', '=', botId)
      .execute();
    return this.get(actor, botId);
  }

  /** The URL of a bot's webhook, for what runs the bot (no actor: the bot is known to exist). */
  async urlOf(botId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('bot_webhooks')
      .select('webhook_id')
      .where('bot_id', '=', botId)
      .executeTakeFirst();
    return row && this.links.webhookUrl(row.webhook_id);
  }

  async reach(webhookId: string): Promise<ReachedWebhook | undefined> {
    if (!isWebhookId(webhookId)) return undefined;
    const row = await this.db
      .selectFrom('bot_webhooks')
      .innerJoin('bots', 'bots.id', 'bot_webhooks.bot_id')
      .select(['bots.id', 'bots.workspace_id', 'bots.signing_secret', 'bot_webhooks.verification'])
      .where('bot_webhooks.webhook_id', '=', webhookId)
      .executeTakeFirst();
    return (
      row && {
        botId: row.id,
        workspaceId: row.workspace_id,
        verification: row.verification,
        signingSecret: row.signing_secret,
      }
    );
  }

  /** A bot of another workspace has no webhook for this actor. */
  private async requireRow(actor: WorkspaceActor, botId: string): Promise<Row<'bot_webhooks'>> {
    const row = await this.db
      .selectFrom('bot_webhooks')
      .innerJoin('bots', 'bots.id', 'bot_webhooks.bot_id')
      .selectAll('bot_webhooks')
      .where('bots.id', '=', botId)
      .where('bots.workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound('Bot', botId);
    return row;
  }

  private toWebhook(row: Row<'bot_webhooks'>): BotWebhook {
    return {
      id: row.webhook_id,
      url: this.links.webhookUrl(row.webhook_id),
      verification: row.verification,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
