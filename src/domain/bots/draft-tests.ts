import type { Db } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import { notFound } from '../shared/errors.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { nowIso } from '../shared/time.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import type { BotLogs } from './bot-logs.ts';
import { draftProblems } from './bot-drafts.ts';
import type { BotDrafts, PackageBuilder } from './bot-drafts.ts';
import type { Bots } from './bots.ts';
import { DRAFT_TEST_TURNS_MAX } from './schemas.ts';
import type { DraftFiles, DraftTestStep, DraftTestTurn, DraftTestVariables } from './schemas.ts';

// The console's test panel talks to a bot's draft without deploying it to the bot. The draft runs as the
// bot's "draft twin": a bot of the same workspace (so the same sandbox, keys and tenant bounds as any
// bot's code), linked to the bot (bot_draft_twins), never listed nor counted, deleted with it. Each test
// redeploys the twin when the draft's compiled code changed, and the panel talks to it through the
// twin's Chat API channel: the bot's own conversations never see the draft. The engine records what each
// of a twin's turns ran (`record`), which the panel reads beside the replies (`turns`).

/** What a turn of a twin ran and left, as the engine hands it over at the turn's end. */
export interface DraftTestRecord {
  eventId: string;
  conversationId: string;
  messageId: string | undefined;
  steps: DraftTestStep[];
  variables: DraftTestVariables;
  /** Why the turn failed (it may be tried again); none when it ended. */
  error: string | undefined;
}

export class DraftTests {
  constructor(
    private readonly db: Db,
    private readonly bots: Bots,
    private readonly drafts: BotDrafts,
    private readonly builder: PackageBuilder,
    private readonly logs: BotLogs,
  ) {}

  /**
   * Deploys `files` (default: the draft, saved or not) to the bot's twin, made at the first test, and
   * answers the webhook id of the twin's Chat API channel. The twin runs with the bot's configuration
   * values and secrets; a draft that does not compile is refused with its problems.
   */
  async start(actor: WorkspaceActor, botId: string, files?: DraftFiles): Promise<{ webhookId: string }> {
    requireRole(actor.role, 'bots.write');
    // The draft's get checks the bot is the actor's and has a package to edit.
    const source = files ?? (await this.drafts.get(actor, botId)).files;
    const bot = await this.bots.get(actor, botId);
    const twin = await this.bots.get(actor, await this.twinOf(actor, botId, bot.name));
    // Actions the twin had and the draft dropped go; the configuration's values are the bot's.
    const built = await this.builder.build(source, { ...twin, configuration: bot.configuration });
    if ('problems' in built) throw draftProblems(built.problems, 'it cannot be tested');
    const running = await this.db
      .selectFrom('bots')
      .select('code')
      .where('id', '=', twin.id)
      .executeTakeFirst();
    const secrets = (await this.bots.forRuntime(botId))?.secrets ?? {};
    const dropped = Object.fromEntries(
      twin.secrets.filter((name) => !(name in secrets)).map((n) => [n, null]),
    );
    const { code, ...definition } = built.update;
    await this.bots.update(actor, twin.id, {
      ...definition,
      // A version of the twin only when the draft's code changed since the last test.
      ...(running?.code !== code && { code, versionDescription: 'test of the draft' }),
      name: `${bot.name} (draft)`.slice(0, 200),
      secrets: { ...dropped, ...secrets },
    });
    const webhookId = twin.integrations.chat?.webhookId;
    if (webhookId === undefined) throw new Error(`the draft twin of bot ${botId} has no chat channel`);
    return { webhookId };
  }

  /**
   * The turns of the test conversation `messageId` is in (a message of the twin's Chat API channel:
   * the ids are shared), oldest first, the latest DRAFT_TEST_TURNS_MAX of them.
   */
  async turns(actor: WorkspaceActor, botId: string, messageId: string): Promise<DraftTestTurn[]> {
    requireRole(actor.role, 'bots.write');
    await requireBotOfWorkspace(this.db, actor, botId);
    const message = await this.db
      .selectFrom('messages')
      .innerJoin('bot_draft_twins', 'bot_draft_twins.twin_id', 'messages.bot_id')
      .select(['messages.bot_id as twinId', 'messages.conversation_id as conversationId'])
      .where('bot_draft_twins.bot_id', '=', botId)
      .where('messages.id', '=', messageId)
      .executeTakeFirst();
    if (!message) throw notFound('Message', messageId);
    const { twinId, conversationId } = message;
    const rows = await this.db
      .selectFrom('draft_test_turns')
      .selectAll()
      .where('bot_id', '=', twinId)
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at', 'desc')
      .orderBy('event_id', 'desc')
      .limit(DRAFT_TEST_TURNS_MAX)
      .execute();
    rows.reverse();
    const eventIds = rows.map((r) => r.event_id);
    const [replies, logs] = await Promise.all([
      eventIds.length === 0
        ? []
        : this.db
            .selectFrom('messages')
            .select(['id', 'event_id'])
            .where('bot_id', '=', twinId)
            .where('conversation_id', '=', conversationId)
            .where('event_id', 'in', eventIds)
            .orderBy('created_at')
            .orderBy('id')
            .execute(),
      this.logs.ofEvents(twinId, eventIds),
    ]);
    return rows.map((r) => ({
      eventId: r.event_id,
      ...(r.message_id !== null && { messageId: r.message_id }),
      replyIds: replies.filter((m) => m.event_id === r.event_id).map((m) => m.id),
      createdAt: r.created_at,
      steps: JSON.parse(r.steps) as DraftTestStep[],
      variables: JSON.parse(r.variables) as DraftTestVariables,
      ...(r.error !== null && { error: r.error }),
      logs: logs.filter((l) => l.eventId === r.event_id),
    }));
  }

  /** Keeps what a twin's turn ran (a turn tried again replaces what its first run recorded). */
  async record(twinId: string, turn: DraftTestRecord): Promise<void> {
    const row = {
      event_id: turn.eventId,
      bot_id: twinId,
      conversation_id: turn.conversationId,
      message_id: turn.messageId ?? null,
      steps: JSON.stringify(turn.steps),
      variables: JSON.stringify(turn.variables),
      error: turn.error ?? null,
      created_at: nowIso(),
    };
    const { event_id: _, created_at: __, ...changes } = row;
    await this.db
      .insertInto('draft_test_turns')
      .values(row)
      .onConflict((oc) => oc.column('event_id').doUpdateSet(changes))
      .execute();
  }

  /** The bot's twin, made at its first test. */
  private async twinOf(actor: WorkspaceActor, botId: string, name: string): Promise<string> {
    const linked = () =>
      this.db.selectFrom('bot_draft_twins').select('twin_id').where('bot_id', '=', botId).executeTakeFirst();
    const existing = await linked();
    if (existing) return existing.twin_id;
    try {
      return (await this.bots.create(actor, { name: `${name} (draft)`.slice(0, 200) }, botId)).id;
    } catch (err) {
      // Another test made it at the same time.
      const made = isUniqueViolation(err) ? await linked() : undefined;
      if (!made) throw err;
      return made.twin_id;
    }
  }
}
