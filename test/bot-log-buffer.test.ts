import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BotLogBuffer, MAX_WAITING_LINES } from '../src/domain/bots/bot-log-buffer.ts';
import type { BotLogProblem, BotLogRow, BotLogSink } from '../src/domain/bots/bot-log-buffer.ts';

/**
 * What the buffer does when the store refuses its lines for a while. The store is the boundary here: a
 * refusal that passes is what a database restart looks like to the buffer (the store tests cover real
 * inserts, and bot-logs.test.ts the buffer on a real server).
 */
class RefusingStore implements BotLogSink {
  refusing = true;
  readonly stored: BotLogRow[] = [];
  readonly bots = new Set(['bot_a', 'bot_b']);

  async insert(rows: readonly BotLogRow[]): Promise<void> {
    if (this.refusing) throw new Error('connection refused');
    this.stored.push(...rows);
  }

  async botExists(botId: string): Promise<boolean> {
    if (this.refusing) throw new Error('connection refused');
    return this.bots.has(botId);
  }
}

let counter = 0;
const row = (botId: string, message: string): BotLogRow => ({
  id: `log_${String(++counter).padStart(8, '0')}`,
  bot_id: botId,
  timestamp: new Date().toISOString(),
  level: 'info',
  message,
  conversation_id: null,
  user_id: null,
  workflow_id: null,
  event_id: null,
  call_kind: null,
  call_ms: null,
});

describe('Bot log buffer', () => {
  test('lines the store refuses wait, are reported, and are written once it takes them again', async () => {
    const store = new RefusingStore();
    const problems: BotLogProblem[] = [];
    const buffer = new BotLogBuffer(store, (p) => problems.push(p));
    buffer.add([row('bot_a', 'one'), row('bot_b', 'two')]);
    await buffer.flush();
    assert.equal(store.stored.length, 0);
    assert.deepEqual(
      problems.map((p) => [p.kind, p.lines]),
      [['retrying', 2]],
    );

    buffer.add([row('bot_a', 'three')]);
    store.refusing = false;
    await buffer.flush();
    assert.deepEqual(
      store.stored.map((r) => r.message),
      ['one', 'two', 'three'],
      'each line once, the oldest first',
    );
    await buffer.close();
    assert.equal(problems.length, 1, 'nothing lost');
  });

  test('past the most lines that may wait, the oldest are given up and reported; the close reports what is left', async () => {
    const store = new RefusingStore();
    const problems: BotLogProblem[] = [];
    const buffer = new BotLogBuffer(store, (p) => problems.push(p));
    buffer.add(Array.from({ length: MAX_WAITING_LINES }, (_, i) => row('bot_a', `old ${i}`)));
    await buffer.flush();
    buffer.add([row('bot_b', 'new')]);
    const lost = problems.filter((p) => p.kind === 'lost');
    assert.deepEqual(lost, [
      { kind: 'lost', botId: 'bot_a', lines: 1, reason: 'too many lines waited for the store' },
    ]);

    store.refusing = false;
    await buffer.flush();
    assert.equal(store.stored.length, MAX_WAITING_LINES);
    assert.equal(store.stored[0]?.message, 'old 1');
    assert.equal(store.stored.at(-1)?.message, 'new');

    store.refusing = true;
    buffer.add([row('bot_b', 'at shutdown')]);
    await buffer.close();
    assert.deepEqual(problems.at(-1), {
      kind: 'lost',
      botId: 'bot_b',
      lines: 1,
      reason: 'the store refused them at shutdown',
    });
  });
});
