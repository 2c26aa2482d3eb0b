import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Db, Executor } from '../../store/index.ts';
import { WEBHOOK_VERIFICATIONS } from '../../store/schema.ts';
import type { Row, WebhookVerification } from '../../store/schema.ts';
import type { Links } from '../bots/links.ts';
import { notFound } from '../shared/errors.ts';
import { isWebhookId } from '../shared/ids.ts';
import { Timestamp } from '../shared/schemas.ts';
import { nowIso } from '../shared/time.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';

export const BotWebhookSchema = Type.Object({
  id: Type.String({ description: 'The webhook id: the last part of its URL' }),
  url: Type.String({ description: 'Where senders post: `{url}` or `{url}/any/path`, any method' }),
  verification: Type.Enum(WEBHOOK_VERIFICATIONS, {
    description:
      '`standard-webhooks`: a request must be signed with the bot’s signing secret (Standard Webhooks); `none`: any request is queued, and the bot checks it',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type BotWebhook = Static<typeof BotWebhookSchema>;

export const UpdateBotWebhookBodySchema = Type.Object({
  verification: Type.Optional(BotWebhookSchema.properties.verification),
});
export type UpdateBotWebhookBody = Static<typeof UpdateBotWebhookBodySchema>;

/** What the ingress needs of the bot a webhook id names. */
export interface ReachedWebhook {
  botId: string;
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
      .select(['bots.id', 'bots.signing_secret', 'bot_webhooks.verification'])
      .where('bot_webhooks.webhook_id', '=', webhookId)
      .executeTakeFirst();
    return (
      row && {
        botId: row.id,
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
