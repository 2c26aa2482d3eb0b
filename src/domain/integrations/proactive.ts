import type { Conversations } from '../runtime/conversations.ts';
import type { Users } from '../runtime/users.ts';
import { ApiError, invalidPayload } from '../shared/errors.ts';
import { isJsonObject, withoutNulls } from '../shared/json.ts';
import type { Json } from '../shared/json.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { IntegrationHostSlot } from './host.ts';
import type { Installation, Installations } from './installations.ts';
import type { Integrations } from './integrations.ts';
import type { User, Conversation } from '../runtime/schemas.ts';

/** What a bot asks of an integration's channel or users: the integration named, and the tags it knows. */
interface Creation {
  integrationName?: string;
  tags?: Record<string, string | null>;
}

/** What a definition says of creation: `{ creation: { enabled, requiredTags } }`, if enabled. */
function creationOf(part: Json | undefined): { requiredTags: string[] } | undefined {
  if (!isJsonObject(part) || !isJsonObject(part.creation) || part.creation.enabled !== true) return undefined;
  const required = part.creation.requiredTags;
  return {
    requiredTags: Array.isArray(required)
      ? required.flatMap((tag) => (typeof tag === 'string' ? [tag] : []))
      : [],
  };
}

/**
 * Proactive creation (`create_conversation`, `create_user`): a bot that creates a conversation (or a
 * user) of an installed integration whose definition enables creation for it asks the integration,
 * which opens it in its service and creates it through the API with its tags; the bot gets that one.
 * Conversations and users of other integrations, or of none, are created as they are asked.
 */
export class ProactiveCreation {
  constructor(
    private readonly installations: Installations,
    private readonly integrations: Integrations,
    private readonly conversations: Conversations,
    private readonly users: Users,
    private readonly host: IntegrationHostSlot,
  ) {}

  /** The conversation the integration made (or, `reuse`, had made), or undefined when it makes none for this request. */
  async conversation(
    actor: BotActor,
    body: Creation & { channel: string },
    existing: 'reuse' | 'new',
  ): Promise<{ conversation: Conversation; created: boolean } | undefined> {
    const found = await this.installationFor(actor, body);
    if (!found) return undefined;
    const channels = found.definition.channels;
    const channel = isJsonObject(channels) ? channels[body.channel] : undefined;
    const creation = creationOf(isJsonObject(channel) ? channel.conversation : undefined);
    if (!creation) return undefined;
    const tags = this.requireTags(body, creation.requiredTags);
    const query = { tags, integrationName: found.installation.alias, channel: body.channel };
    const find = async () => (await this.conversations.list(actor, { ...query, pageSize: 1 })).items[0];
    if (existing === 'reuse') {
      const conversation = await find();
      if (conversation) return { conversation, created: false };
    }
    await this.host.get().createConversation(found.installation, body.channel, tags);
    return {
      conversation: (await find()) ?? this.nothingMade(found.installation, 'conversation'),
      created: true,
    };
  }

  /** The user the integration made (or, `reuse`, had made), or undefined when it makes none for this request. */
  async user(
    actor: BotActor,
    body: Creation,
    existing: 'reuse' | 'new',
  ): Promise<{ user: User; created: boolean } | undefined> {
    const found = await this.installationFor(actor, body);
    const creation = found && creationOf(found.definition.user);
    if (!found || !creation) return undefined;
    const tags = this.requireTags(body, creation.requiredTags);
    const find = async () => (await this.users.list(actor, { tags, pageSize: 1 })).items[0];
    if (existing === 'reuse') {
      const user = await find();
      if (user) return { user, created: false };
    }
    await this.host.get().createUser(found.installation, tags);
    return { user: (await find()) ?? this.nothingMade(found.installation, 'user'), created: true };
  }

  /** Only the bot asks an integration to create (an integration creates its own directly). */
  private async installationFor(
    actor: BotActor,
    body: Creation,
  ): Promise<{ installation: Installation; definition: Record<string, Json> } | undefined> {
    if (actor.integration !== undefined || body.integrationName === undefined) return undefined;
    const installation = await this.installations.byAlias(actor.botId, body.integrationName);
    if (!installation?.enabled) return undefined;
    const definition = await this.integrations.definitionOf(installation.integrationId);
    return definition && { installation, definition };
  }

  private requireTags(body: Creation, required: string[]): Record<string, string> {
    const tags = withoutNulls(body.tags);
    const missing = required.find((tag) => tags[tag] === undefined);
    if (missing !== undefined)
      throw invalidPayload(
        `tags.${missing}: the integration ${body.integrationName ?? ''} needs it to create one`,
      );
    return tags;
  }

  private nothingMade(installation: Installation, what: string): never {
    throw new ApiError(
      'Runtime',
      `The integration ${installation.integrationName} created no ${what} with the tags given (its create handler must create it through the API)`,
    );
  }
}
