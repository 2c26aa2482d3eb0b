import type { TSchema } from 'typebox';
import type { Store } from '../../store/index.ts';
import type { Conversations } from '../runtime/conversations.ts';
import type { BotRef } from '../runtime/events.ts';
import type { Users } from '../runtime/users.ts';
import { ApiError, invalidPayload } from '../shared/errors.ts';
import { createAjv, onFirstUse } from '../shared/json-schema.ts';
import type { JsonObject } from '../shared/json.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Handoffs } from './handoffs.ts';
import {
  CreateUserInputSchema,
  HITL_ACTIONS,
  HITL_CHANNEL,
  HITL_INTEGRATION,
  StartHitlInputSchema,
  StopHitlInputSchema,
} from './hitl-schemas.ts';
import type { CreateUserInput, HitlAction, StartHitlInput, StopHitlInput } from './hitl-schemas.ts';

const ajv = createAjv();
/** An action's input, checked against its schema (compiled once, on its first use). */
function check<T>(schema: TSchema): (input: JsonObject) => T {
  const validate = onFirstUse(() => ajv.compile<T>(schema));
  return (input) => {
    if (validate(input)) return input;
    const error = validate.errors?.[0];
    throw invalidPayload(`input${error?.instancePath ?? ''} ${error?.message ?? 'is invalid'}`);
  };
}
const inputs = {
  createUser: check<CreateUserInput>(CreateUserInputSchema),
  startHitl: check<StartHitlInput>(StartHitlInputSchema),
  stopHitl: check<StopHitlInput>(StopHitlInputSchema),
};

const isAction = (name: string): name is HitlAction => (HITL_ACTIONS as readonly string[]).includes(name);

/** What the handoff's queue reads when the bot gave neither a title nor a description. */
const DEFAULT_REASON = 'The bot asked for a person';

/**
 * The built-in `hitl` integration: the hosted `hitl` interface (`createUser`, `startHitl`, `stopHitl`;
 * the `hitlAssigned` and `hitlStopped` events; the `hitl` channel) over Parley's handoffs, so that an
 * SDK bot, and the official hitl plugin, hand a visitor to the members of the bot's workspace with the
 * calls they make to a hosted desk's integration. Parley's inbox is the desk: `startHitl` opens a handoff
 * of the visitor's conversation and makes its agent-side conversation (the ticket), where the agents'
 * messages reach the bot and the bot copies the visitor's (`Handoffs` does the rest).
 */
export class HitlIntegration {
  constructor(
    private readonly store: Store,
    private readonly users: Users,
    private readonly conversations: Conversations,
    private readonly handoffs: Handoffs,
  ) {}

  /** Whether `alias:name` is one of its actions: under `hitl`, on every bot. */
  handles(alias: string, name: string): boolean {
    return alias === HITL_INTEGRATION && isAction(name);
  }

  async call(actor: BotActor, name: string, input: JsonObject): Promise<JsonObject> {
    const bot = { botId: actor.botId, workspaceId: actor.workspaceId };
    if (name === 'createUser') return this.createUser(bot, inputs.createUser(input));
    if (name === 'startHitl') return this.startHitl(bot, inputs.startHitl(input));
    return this.stopHitl(bot, inputs.stopHitl(input));
  }

  /** A user of the bot for the end user, as a desk's integration makes its requester. */
  private async createUser(bot: BotRef, input: CreateUserInput): Promise<JsonObject> {
    const user = await this.users.create(bot, {
      name: input.name,
      ...(input.pictureUrl !== undefined && { pictureUrl: input.pictureUrl }),
      integrationName: HITL_INTEGRATION,
      // The plugin reads the end user's email back from this tag.
      tags: input.email === undefined ? {} : { email: input.email },
    });
    return { userId: user.id };
  }

  /**
   * Opens a handoff of the visitor's conversation, with its hitl conversation, and answers the hitl
   * conversation's id. The visitor is the user `userId` names, or the one its `upstream` tag names (the
   * plugin links a `createUser` user to the visitor so, before it calls); their conversation is the one
   * they last wrote in (the message that made the bot hand over). An open handoff of that conversation
   * is answered again, as a retried call finds the one it opened.
   */
  private async startHitl(bot: BotRef, input: StartHitlInput): Promise<JsonObject> {
    const endUser = await this.users.get(bot, input.userId);
    const upstream = endUser.tags.upstream;
    const visitorId =
      upstream !== undefined && (await this.users.exists(bot, upstream)) ? upstream : endUser.id;
    const conversationId = await this.lastConversationOf(bot, visitorId);
    if (conversationId === undefined)
      throw invalidPayload(
        `User "${visitorId}" has written in no conversation of the bot: there is nothing to hand over`,
      );
    const open = await this.handoffs.openIn(bot, conversationId);
    if (open) return { conversationId: this.hitlConversationOf(open) };
    const hitl = await this.conversations.create(bot, {
      channel: HITL_CHANNEL,
      integrationName: HITL_INTEGRATION,
      tags: {},
    });
    // The integration's user for the visitor takes part in the ticket; the visitor's own does not (the
    // agents' side is not theirs to read).
    if (endUser.id !== visitorId) await this.conversations.addParticipant(bot, hitl.id, endUser.id);
    const reason = [input.title, input.description].filter((s) => s !== undefined && s !== '').join(': ');
    const session = input.hitlSession;
    const handoff = await this.handoffs.open(bot, {
      conversationId,
      userId: visitorId,
      reason: reason === '' ? DEFAULT_REASON : reason,
      ...(session?.team !== undefined && { team: session.team }),
      ...(session?.timeoutSeconds !== undefined && { timeoutSeconds: session.timeoutSeconds }),
      source: 'hitl',
      hitlConversationId: hitl.id,
    });
    // Another call opened one meanwhile: its hitl conversation is the one.
    if (handoff.hitlConversationId !== hitl.id) await this.conversations.delete(bot, hitl.id);
    return { conversationId: this.hitlConversationOf(handoff) };
  }

  /** Closes the handoff of a hitl conversation as the bot; one already closed is left as it is. */
  private async stopHitl(bot: BotRef, input: StopHitlInput): Promise<JsonObject> {
    const handoff = await this.handoffs.ofHitlConversation(bot, input.conversationId);
    if (!handoff)
      throw invalidPayload(`Conversation "${input.conversationId}" is not a hitl conversation of the bot`);
    await this.handoffs.stopByBot(bot, handoff.id).catch((err: unknown) => {
      // Closed already (by an agent, the timeout or an earlier call): stopped all the same.
      if (!(err instanceof ApiError && err.type === 'RelationConflict')) throw err;
    });
    return {};
  }

  private hitlConversationOf(handoff: { id: string; hitlConversationId?: string }): string {
    if (handoff.hitlConversationId !== undefined) return handoff.hitlConversationId;
    throw new ApiError(
      'RelationConflict',
      `The conversation is already handed over by the bot's handoff card (handoff "${handoff.id}")`,
    );
  }

  /** The conversation (not a hitl one) in which the user last wrote to the bot. */
  private async lastConversationOf(bot: BotRef, userId: string): Promise<string | undefined> {
    const row = await this.store.db
      .selectFrom('messages as m')
      .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
      .select('m.conversation_id')
      .where('m.bot_id', '=', bot.botId)
      .where('m.user_id', '=', userId)
      .where('m.direction', '=', 'incoming')
      .where('c.integration', '!=', HITL_INTEGRATION)
      .orderBy('m.created_at', 'desc')
      .orderBy('m.id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.conversation_id;
  }
}
