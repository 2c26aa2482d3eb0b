import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../store/schema.ts';

/**
 * A bot that is no draft twin (draft-tests.ts): a twin is the test panel's, never listed nor counted as a
 * bot of its workspace.
 */
export const notDraftTwin = (eb: ExpressionBuilder<Database, 'bots'>) =>
  eb('bots.id', 'not in', eb.selectFrom('bot_draft_twins').select('bot_draft_twins.twin_id'));
