import { randomBytes, randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { invalidPayload } from '../shared/errors.ts';
import { isWebhookId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import type { Settings } from '../shared/settings.ts';
import type { Caches } from '../shared/caches.ts';
import type { WebchatAppearance } from '../webchat/appearance.ts';
import type { FallbackMessage } from './fallback-message.ts';

/** The built-in chat integration: its name is also its id and its alias on every bot. */
export const CHAT_INTEGRATION = 'chat';

/** The shared-mode signing secret, kept in the store when the operator gives none. */
const SHARED_SECRET_SETTING = 'chat.sharedSecret';

export interface ChatChannel {
  botId: string;
  webhookId: string;
  enabled: boolean;
  /** Set: personal mode, the bot owner signs user keys with it. Undefined: shared mode. */
  encryptionKey?: string;
  /** The origins browsers may call the channel's routes from; undefined: any origin. */
  allowedOrigins?: string[];
  /** How the channel's webchat looks. */
  webchat: WebchatAppearance;
  /** What a visitor reads when a turn fails, as set; undefined: the default (`fallbackInForce`). */
  fallbackMessage?: FallbackMessage;
  createdAt: string;
  updatedAt: string;
}

/** A channel as a request reaches it: with the workspace and the name of its bot. */
export interface ReachedChannel extends ChatChannel {
  workspaceId: string;
  botName: string;
}

export interface ChatChannelChanges {
  enabled?: boolean;
  /** `null` returns the channel to shared mode. */
  encryptionKey?: string | null;
  /** `null`: any origin. */
  allowedOrigins?: string[] | null;
  webchat?: WebchatAppearance;
  /** `null`: back to the default. */
  fallbackMessage?: FallbackMessage | null;
}

function toChannel(row: Row<'chat_channels'>): ChatChannel {
  return {
    botId: row.bot_id,
    webhookId: row.webhook_id,
    enabled: row.enabled === 1,
    ...(row.encryption_key !== null && { encryptionKey: row.encryption_key }),
    ...(row.allowed_origins !== null && { allowedOrigins: JSON.parse(row.allowed_origins) as string[] }),
    webchat: JSON.parse(row.webchat) as WebchatAppearance,
    ...(row.fallback_message !== null && {
      fallbackMessage: JSON.parse(row.fallback_message) as FallbackMessage,
    }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Every bot's chat channel: the webhook id in its Chat API URL, and how its user keys are signed. */
export class ChatChannels {
  constructor(
    private readonly db: Db,
    private readonly settings: Settings,
    private readonly caches: Caches,
  ) {}

  async create(db: Executor, botId: string): Promise<ChatChannel> {
    const now = nowIso();
    const row: Row<'chat_channels'> = {
      bot_id: botId,
      webhook_id: randomUUID(),
      enabled: 1,
      encryption_key: null,
      allowed_origins: null,
      webchat: '{}',
      fallback_message: null,
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('chat_channels').values(row).execute();
    return toChannel(row);
  }

  async forBot(botId: string, db: Executor = this.db): Promise<ChatChannel | undefined> {
    const row = await db
      .selectFrom('chat_channels')
      .selectAll()
      .where('bot_id', '=', botId)
      .executeTakeFirst();
    return row && toChannel(row);
  }

  /** The channel of a webhook id, with the workspace and the name of its bot. */
  async byWebhook(webhookId: string): Promise<ReachedChannel | undefined> {
    if (!isWebhookId(webhookId)) return undefined;
    return (await this.caches.channels.through(webhookId, () => this.readByWebhook(webhookId))) as
      ReachedChannel | undefined;
  }

  private async readByWebhook(webhookId: string): Promise<ReachedChannel | undefined> {
    const row = await this.db
      .selectFrom('chat_channels')
      .innerJoin('bots', 'bots.id', 'chat_channels.bot_id')
      .selectAll('chat_channels')
      .select(['bots.workspace_id', 'bots.name as bot_name'])
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    return row && { ...toChannel(row), workspaceId: row.workspace_id, botName: row.bot_name };
  }

  async update(db: Executor, botId: string, changes: ChatChannelChanges): Promise<void> {
    if (typeof changes.encryptionKey === 'string' && changes.encryptionKey.length < 16) {
      throw invalidPayload('integrations.chat.configuration.encryptionKey must be at least 16 characters');
    }
    await db
      .updateTable('chat_channels')
      .set({
        ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
        ...(changes.encryptionKey !== undefined && { encryption_key: changes.encryptionKey }),
        ...(changes.allowedOrigins !== undefined && {
          allowed_origins: changes.allowedOrigins === null ? null : JSON.stringify(changes.allowedOrigins),
        }),
        ...(changes.webchat !== undefined && { webchat: JSON.stringify(changes.webchat) }),
        ...(changes.fallbackMessage !== undefined && {
          fallback_message: changes.fallbackMessage === null ? null : JSON.stringify(changes.fallbackMessage),
        }),
        updated_at: nowIso(),
      })
      .where('bot_id', '=', botId)
      .execute();
    this.caches.botChanged(botId);
  }

  /**
   * The secret that signs user keys of channels in shared mode: the configured one, else one
   * generated at first use and kept in the store, so every process and restart agrees on it.
   */
  async sharedSecret(configured: string | undefined): Promise<string> {
    if (configured) return configured;
    const existing = await this.settings.get(SHARED_SECRET_SETTING);
    if (existing) return existing;
    // Of several processes starting at once, one stores its secret; all use the stored one.
    await this.settings.compareAndSet(
      SHARED_SECRET_SETTING,
      undefined,
      randomBytes(32).toString('base64url'),
    );
    const stored = await this.settings.get(SHARED_SECRET_SETTING);
    if (!stored) throw new Error('the chat secret could not be stored');
    return stored;
  }
}
