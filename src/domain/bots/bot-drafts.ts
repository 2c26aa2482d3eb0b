import type { Db } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { invalidPayload, notFound } from '../shared/errors.ts';
import { cacheKey } from '../shared/output-cache.ts';
import { nowIso } from '../shared/time.ts';
import { requireRole } from '../workspace/roles.ts';
import type { Bots } from './bots.ts';
import type { PackageDefinition } from './package-format.ts';
import type { Bot, BotDraft, DraftFiles, DraftLayout, PackageProblem, UpdateBotBody } from './schemas.ts';

// A bot's draft, one per bot: the files of a package folder (what `parley deploy` reads) that the console
// edits, and where the author left each node. Deploying it compiles it as `parley deploy` does and
// deploys it as a new version of the bot (Bots.update with `code`), so versions and rollbacks are the
// same whichever way the bot was deployed. A deployed package keeps only compiled code: a bot without a
// saved draft opens with the files made of what it runs, its code files holding that compiled JavaScript.

/**
 * The bot package format, which the domain is given (`package/`): it builds on the domain's rules.
 */
export interface PackageBuilder {
  /** The problems of the package `files` make, with `parley validate`'s messages; none when it compiles. */
  check(files: DraftFiles): Promise<PackageProblem[]>;
  /**
   * The package compiled, as the update of the bot `parley deploy` makes of it, and its tables (JSON as
   * the compiled package keeps them); or its problems.
   */
  build(
    files: DraftFiles,
    current: Bot,
  ): Promise<{ problems: PackageProblem[] } | { update: UpdateBotBody; tables: unknown }>;
  /** The files of a deployed package's code (what `parley deploy` uploaded). */
  sourcesOf(code: string): DraftFiles;
  /** A new bot's first files: a manifest and a main workflow that only starts. */
  blank(name: string): DraftFiles;
}

/** Where a draft's code files come from when it is first made: a deployed package keeps compiled code. */
const codeFromOf = (code: string | null): BotDraft['codeFrom'] => (code === null ? 'sources' : 'compiled');

/** A draft that does not compile, refused: its problems in the error's `metadata.problems`. */
export function draftProblems(problems: PackageProblem[], outcome: string): Error {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return invalidPayload(`The draft has ${count}: ${outcome}`, { problems });
}

function draftView(row: Row<'bot_drafts'>): BotDraft {
  return {
    files: JSON.parse(row.files) as DraftFiles,
    layout: JSON.parse(row.layout) as DraftLayout,
    saved: true,
    codeFrom: row.code_from,
    ...(row.base_version_id !== null && { baseVersionId: row.base_version_id }),
    updatedAt: row.updated_at,
    ...(row.updated_by !== null && { updatedBy: row.updated_by }),
  };
}

export class BotDrafts {
  constructor(
    private readonly db: Db,
    private readonly bots: Bots,
    private readonly builder: PackageBuilder,
  ) {}

  /** The saved draft, else the files of the package the bot runs (or of a blank one), unsaved. */
  async get(actor: WorkspaceActor, botId: string): Promise<BotDraft> {
    const bot = await this.requireBot(actor, botId);
    const row = await this.row(botId);
    if (row) return draftView(row);
    const files = bot.code === null ? this.builder.blank(bot.name) : this.builder.sourcesOf(bot.code);
    return {
      files,
      layout: {},
      saved: false,
      codeFrom: codeFromOf(bot.code),
      ...(bot.version_id !== null && { baseVersionId: bot.version_id }),
    };
  }

  /** The problems of `files`, as `parley validate` reports them. */
  async validate(actor: WorkspaceActor, botId: string, files: DraftFiles): Promise<PackageProblem[]> {
    requireRole(actor.role, 'bots.write');
    await this.requireBot(actor, botId);
    return this.builder.check(files);
  }

  /** Keeps the draft (a draft with problems too: it is work in progress) and answers its problems. */
  async save(
    actor: WorkspaceActor,
    botId: string,
    body: { files: DraftFiles; layout: DraftLayout },
  ): Promise<{ draft: BotDraft; problems: PackageProblem[] }> {
    requireRole(actor.role, 'bots.write');
    const bot = await this.requireBot(actor, botId);
    const problems = await this.builder.check(body.files);
    const existing = await this.row(botId);
    const row: Row<'bot_drafts'> = {
      bot_id: botId,
      files: JSON.stringify(body.files),
      layout: JSON.stringify(body.layout),
      // Its code files are compiled code until the draft is discarded, whatever is edited around them.
      code_from: existing?.code_from ?? codeFromOf(bot.code),
      base_version_id: existing ? existing.base_version_id : bot.version_id,
      updated_by: actor.accountId,
      updated_at: nowIso(),
    };
    const { bot_id: _, ...changes } = row;
    await this.db
      .insertInto('bot_drafts')
      .values(row)
      .onConflict((oc) => oc.column('bot_id').doUpdateSet(changes))
      .execute();
    return { draft: draftView(row), problems };
  }

  async discard(actor: WorkspaceActor, botId: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.requireBot(actor, botId);
    await this.db.deleteFrom('bot_drafts').where('bot_id', '=', botId).execute();
  }

  /**
   * Compiles the saved draft and deploys it as a new version of the bot, with `note`; the draft stays,
   * based on that version. A draft with problems deploys nothing (400, the problems in `metadata`); so
   * does one whose tables differ from those the bot runs, since migrating a table's rows is
   * `parley deploy`'s (with its guard against losing data).
   */
  async deploy(actor: WorkspaceActor, botId: string, note?: string): Promise<{ versionId: string }> {
    requireRole(actor.role, 'bots.write');
    const bot = await this.requireBot(actor, botId);
    const row = await this.row(botId);
    if (!row) throw invalidPayload(`Bot ${botId} has no saved draft to deploy`);
    const current = await this.bots.get(actor, botId);
    const built = await this.builder.build(JSON.parse(row.files) as DraftFiles, current);
    if ('problems' in built) throw draftProblems(built.problems, 'nothing was deployed');
    const deployedTables = bot.code === null ? undefined : (JSON.parse(bot.code) as PackageDefinition).tables;
    if (cacheKey(deployedTables ?? {}) !== cacheKey(built.tables ?? {}))
      throw invalidPayload(
        'The draft changes the bot’s tables: deploy table changes with parley deploy, which migrates their rows',
      );
    const deployed = await this.bots.update(actor, botId, {
      ...built.update,
      ...(note !== undefined && { versionDescription: note }),
    });
    const versionId = deployed.versionId;
    if (versionId === undefined) throw new Error(`bot ${botId} was deployed without a version`);
    await this.db
      .updateTable('bot_drafts')
      .set({ base_version_id: versionId })
      .where('bot_id', '=', botId)
      .execute();
    return { versionId };
  }

  private row(botId: string): Promise<Row<'bot_drafts'> | undefined> {
    return this.db.selectFrom('bot_drafts').selectAll().where('bot_id', '=', botId).executeTakeFirst();
  }

  /** A bot of another workspace does not exist for this actor. */
  private async requireBot(
    actor: WorkspaceActor,
    botId: string,
  ): Promise<Pick<Row<'bots'>, 'name' | 'code' | 'runtime' | 'version_id'>> {
    const bot = await this.db
      .selectFrom('bots')
      .select(['name', 'code', 'runtime', 'version_id'])
      .where('id', '=', botId)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!bot) throw notFound('Bot', botId);
    if (bot.runtime === 'botpress-sdk')
      throw invalidPayload(`Bot ${botId} runs a bundle deployed with bp deploy: it has no package to edit`);
    return bot;
  }
}
