import type { Messages } from '../runtime/messages.ts';
import { unlessMissing } from '../shared/errors.ts';
import { derivedId } from '../shared/ids.ts';
import type { ChatChannels } from './channels.ts';
import { fallbackInForce } from './fallback-message.ts';

/** The event of a turn that failed for good, as far as its fallback needs it. */
export interface FailedEvent {
  id: string;
  type: string;
  botId: string;
  workspaceId: string;
  conversationId?: string;
}

/**
 * The fallback's number among the records derived from its event: the last `derivedId` takes, past the
 * numbers a turn gives its replies (1, 2...), so the two never meet.
 */
const FALLBACK_NUMBER = 32 ** 3 - 1;

/**
 * What a visitor gets instead of silence when the turn of their message fails for good: the bot's
 * fallback message (`fallback-message.ts`), in the conversation, as the bot. Sent only once the event is
 * given up (never for a try that a later one may redeem), and once per event: its id is made from the
 * event's, so a sender that runs again (its process died before the event's end was recorded) finds it.
 */
export class FallbackReplies {
  constructor(
    private readonly channels: ChatChannels,
    private readonly messages: Messages,
  ) {}

  /** Sends the fallback for `event` if it is a user's message and the bot's setting is on; says whether it did. */
  async send(event: FailedEvent): Promise<boolean> {
    const { conversationId } = event;
    if (event.type !== 'message_created' || conversationId === undefined) return false;
    const channel = await this.channels.forBot(event.botId);
    const { enabled, text } = fallbackInForce(channel?.fallbackMessage);
    if (!enabled) return false;
    const actor = { botId: event.botId, workspaceId: event.workspaceId };
    const id = derivedId('message', event.id, FALLBACK_NUMBER);
    if (await unlessMissing(this.messages.get(actor, id))) return false;
    await this.messages.create(
      actor,
      { conversationId, userId: event.botId, type: 'text', payload: { text } },
      { id, eventId: event.id },
    );
    return true;
  }
}
