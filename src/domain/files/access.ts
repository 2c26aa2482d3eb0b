import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { forbidden } from '../shared/errors.ts';

/**
 * Who may do what with a file. A file is its bot's: another bot's files do not exist for a caller.
 * Within the bot, the bot itself (its key, or a member of its workspace) sees every file; an
 * integration acting for the bot sees its own files and those with the `integrations` policy. Only
 * the file's owner (the bot, or the integration that created it) may change or delete it.
 */

/** `bot`, or `integration:<alias>`: the owner of the files an actor creates. */
export function ownerOf(actor: BotActor): string {
  return actor.integration === undefined ? 'bot' : `integration:${actor.integration}`;
}

/** The file's `owner` object of the wire format. */
export function ownerObject(row: Pick<Row<'files'>, 'owner' | 'bot_id'>) {
  if (row.owner.startsWith('integration:')) {
    const alias = row.owner.slice('integration:'.length);
    return { type: 'integration' as const, name: alias, alias };
  }
  return { type: 'bot' as const, id: row.bot_id };
}

/** The files (in table `files`) that `actor` may see. */
export function visibleFiles(actor: BotActor): RawBuilder<SqlBool> {
  const ofBot = sql<SqlBool>`files.bot_id = ${actor.botId}`;
  if (actor.integration === undefined) return ofBot;
  return sql<SqlBool>`${ofBot} and (files.owner = ${ownerOf(actor)} or files.access_policies like ${'%"integrations"%'})`;
}

export function requireOwner(actor: BotActor, row: Pick<Row<'files'>, 'owner' | 'key'>): void {
  if (row.owner !== ownerOf(actor)) {
    throw forbidden(
      `File "${row.key}" belongs to ${row.owner === 'bot' ? 'the bot' : row.owner}: only its owner may change it`,
    );
  }
}
