import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { RE2JS } from 're2js';
import { caseOrbit } from '../src/store/regex/case-folding.ts';
import { runParley } from './helpers/process.ts';
import type { ParleyProcess } from './helpers/process.ts';
import { freshPostgresSchema, testStores } from './helpers/stores.ts';
import { LISTENING, STARTS_WITHIN_MS } from './helpers/serve-processes.ts';

/**
 * `$regex` cannot hold the server: patterns that backtrack for hours in JavaScript's engine, and one
 * that makes RE2 itself slow, run against a table of 400-character rows while another client times
 * `/healthz`. The server runs as its own process (`parley serve`), so that a blocked server cannot
 * block the clock that times it.
 */

const TABLE = 'RegexTexts';
const ROWS = 3000;
const TEXT_LENGTH = 400;
/**
 * How much slower than when idle `/healthz` may answer while the queries run. A SQLite statement with
 * a `$regex` may hold the server's thread 100 ms (PARLEY_SQLITE_REGEX_TIMEOUT_MS; its watchdog was seen
 * to fire at 105-140 ms on this machine at load 14), and the query's answer is written after it. The
 * machine's own delays are measured first (the slowest of a second of `/healthz` with nothing else
 * asked: hundreds of milliseconds on a 2-core machine at load 15-20) and allowed on top. Before
 * linear-time matching one query held the server for minutes (`^(a|a)*$` on 40 characters: hours).
 */
const HEALTHZ_SLOWER_BY_MS = 500;
/** How long a `/healthz` is waited for before it counts as unanswered. */
const HEALTHZ_GIVE_UP_MS = 5000;
/** How long a query is waited for before it counts as hanging. */
const QUERY_GIVE_UP_MS = 20_000;

/** Backtracking JavaScript takes hours on these (docs/security.md, "Regular expressions"). */
const ATTACKS = ['.*.*.*.*=', '^(a|a)*$', '(a+)+$'];
/** Linear in RE2 but slow (its DFA gives up: the text's every character starts a new state set). */
const RE2_SLOW = '(?:.*a.{40}){8}c';

/** 400 characters: the attacks' worst cases (no "=", a run of "a" that ends otherwise), and mixtures. */
function rowText(i: number): string {
  if (i % 3 === 0) return `${'a'.repeat(TEXT_LENGTH - 1)}!`;
  if (i % 3 === 1) return 'x'.repeat(TEXT_LENGTH);
  // Random a and b, then the "c" RE2_SLOW needs (without it, RE2 sees at once that no row can match).
  let seed = i;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return `${Array.from({ length: TEXT_LENGTH - 1 }, () => (random() < 0.5 ? 'a' : 'b')).join('')}c`;
}

interface Served {
  proc: ParleyProcess;
  url: string;
  botId: string;
  key: string;
}

const all = await testStores();

for (const store of all) {
  describe(`$regex on ${store.name}: linear-time, bounded, the same syntax`, { skip: store.skip }, () => {
    const token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
    let served: Served;
    let dir: string;
    let schema: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined;

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'parley-regex-'));
      schema = store.name === 'postgres' ? await freshPostgresSchema() : undefined;
      const proc = runParley(['serve', '--port', '0', '--data-dir', dir], {
        PARLEY_ADMIN_TOKEN: token,
        LOG_LEVEL: 'info',
        ...(schema && { DATABASE_URL: schema.url }),
      });
      const [, url = ''] = await proc.waitFor(LISTENING, STARTS_WITHIN_MS);
      const [, workspaceId] = await proc.waitFor(/workspace id: (\S+)/);
      const admin = new Client({ apiUrl: url, token, workspaceId });
      const { bot } = await admin.createBot({ name: 'regex' });
      const { value } = await admin.createBotApiKey({ botId: bot.id });
      const client = new Client({ apiUrl: url, token: value, botId: bot.id });
      await client.createTable({
        name: TABLE,
        schema: { type: 'object', properties: { text: { type: 'string' } } },
      });
      const rows = Array.from({ length: ROWS }, (_, i) => ({ text: rowText(i) }));
      for (let i = 0; i < rows.length; i += 1000) {
        const res = await client.createTableRows({ table: TABLE, rows: rows.slice(i, i + 1000) });
        assert.deepEqual(res.errors ?? [], []);
      }
      served = { proc, url, botId: bot.id, key: value };
    });

    after(async () => {
      const child = served?.proc.child;
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        // A server stuck in a match answers no signal handler: it is killed.
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await served.proc.exited;
        clearTimeout(killer);
      }
      await schema?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    /** Times `/healthz` every 20 ms until stopped: each answer's time, an unanswered one as Infinity. */
    function timeHealthz(url: string): { stop(): Promise<number[]> } {
      const times: number[] = [];
      let running = true;
      const loop = (async () => {
        while (running) {
          const start = performance.now();
          try {
            const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_GIVE_UP_MS) });
            await res.text();
            times.push(res.ok ? performance.now() - start : Infinity);
          } catch {
            times.push(Infinity);
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      return {
        stop: async () => {
          running = false;
          await loop;
          return times;
        },
      };
    }

    /**
     * What `findTableRows` or `deleteTableRows` with this filter answered: its row count, its error's
     * status, type and message, or "no answer" after QUERY_GIVE_UP_MS (plain fetch, so that nothing
     * waits longer).
     */
    async function query(operation: 'find' | 'delete', filter: unknown): Promise<string> {
      try {
        const res = await fetch(`${served.url}/v1/tables/${TABLE}/rows/${operation}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${served.key}`,
            'x-bot-id': served.botId,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ filter, ...(operation === 'find' && { limit: 1000 }) }),
          signal: AbortSignal.timeout(QUERY_GIVE_UP_MS),
        });
        const body = (await res.json()) as {
          rows?: unknown[];
          deletedRows?: number;
          type?: string;
          message?: string;
        };
        if (!res.ok) return `${res.status} ${body.type}: ${body.message}`;
        return body.rows ? `${body.rows.length} rows` : `${body.deletedRows} deleted`;
      } catch (err) {
        return `no answer: ${String(err)}`;
      }
    }

    test('the attacks answer a 400 or their rows, and /healthz answers throughout', async (t) => {
      const idle = timeHealthz(served.url);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const noise = Math.max(...(await idle.stop()));
      const bound = noise + HEALTHZ_SLOWER_BY_MS;
      const clock = timeHealthz(served.url);
      const answers: string[] = [];
      try {
        const queries: ['find' | 'delete', unknown][] = [
          ...[...ATTACKS, RE2_SLOW].flatMap((pattern) =>
            [undefined, 'i'].map((options): ['find', unknown] => [
              'find',
              { text: { $regex: pattern, ...(options && { $options: options }) } },
            ]),
          ),
          ['delete', { text: { $regex: RE2_SLOW } }],
        ];
        for (const [operation, filter] of queries) {
          const answer = await query(operation, filter);
          answers.push(`${operation} ${JSON.stringify(filter)}: ${answer}`);
          // A server that does not answer one query answers none after it: no use waiting for each.
          if (answer.startsWith('no answer')) break;
        }
      } finally {
        const times = await clock.stop();
        const slowest = Math.max(...times);
        t.diagnostic(
          `${times.length} /healthz, the slowest in ${slowest.toFixed(0)} ms (idle: ${noise.toFixed(0)} ms)`,
        );
        t.diagnostic(answers.join('\n'));
        assert.ok(times.length > 5, `/healthz was timed ${times.length} times`);
        assert.ok(noise < HEALTHZ_GIVE_UP_MS, `/healthz answers when nothing else is asked`);
        assert.ok(
          slowest < bound,
          `/healthz answered in up to ${slowest.toFixed(0)} ms (bound ${bound.toFixed(0)})`,
        );
      }
      for (const answer of answers) {
        assert.match(answer, /: (\d+ rows|\d+ deleted|400 InvalidQuery: .+)$/, answer);
      }
      if (store.name === 'sqlite') {
        // 3,000 rows at a watched match each are far past 100 ms: the deadline is what answers.
        assert.ok(
          answers.some(
            (a) => a.includes(RE2_SLOW) && /400 InvalidQuery: The query ran past the time limit/.test(a),
          ),
          'the RE2-slow pattern ran into the deadline',
        );
      }
    });

    test('patterns outside the syntax are 400 InvalidQuery naming the field, on find and delete', async () => {
      const refused: [string, string, RegExp][] = [
        ['a back-reference', '(a)\\1', /back-references/],
        ['a named back-reference', '(?P<x>a)(?P=x)', /back-references/],
        ['a look-ahead', 'a(?=b)', /look-arounds/],
        ['a negative look-ahead', 'a(?!b)', /look-arounds/],
        ['a look-behind', '(?<=a)b', /look-arounds/],
        ['a negative look-behind', '(?<!a)b', /look-arounds/],
        ['a Unicode class', '\\p{L}', /Unicode classes/],
        ['an inline flag', '(?i)a', /inline flags/],
        ['an octal escape', '\\012', /octal/],
        ['a count above 255', 'a{256}', /255/],
        ['nested counts past RE2 limit', '(?:a{100}){11}', /invalid repeat count/],
        ['a nested quantifier', 'a**', /quantifier/],
        ['an unclosed group', '(a', /not closed/],
        ['an unclosed bracket', '[a', /not closed/],
        ['an unknown escape', '\\e', /no escape/],
        ['a backwards range', '[z-a]', /backwards/],
        ['an unknown POSIX class', '[[:nope:]]', /no class/],
      ];
      const problems: string[] = [];
      for (const [what, pattern, reason] of refused) {
        for (const operation of ['find', 'delete'] as const) {
          const answer = await query(operation, { text: { $regex: pattern } });
          if (!answer.startsWith('400 InvalidQuery: filter.text.$regex: ') || !reason.test(answer)) {
            problems.push(`${what} ${JSON.stringify(pattern)} (${operation}): ${answer}`);
          }
        }
      }
      assert.deepEqual(problems, []);
    });
  });
}

test('the case orbits written out for Postgres are the ones RE2 folds with, for every letter', () => {
  // Postgres is given each folded letter as its orbit (src/store/regex/case-folding.ts); SQLite's
  // RE2JS folds by its own tables. Past U+1FFFF no letter has case.
  const cased: number[] = [];
  for (let c = 0; c <= 0x1ffff; c++) if ((c < 0xd800 || c > 0xdfff) && caseOrbit(c).length > 1) cased.push(c);
  assert.ok(cased.length > 2500, `${cased.length} letters with case`);
  const everyCased = String.fromCodePoint(...cased);
  const problems: string[] = [];
  const checked = new Set<number>();
  for (const c of cased) {
    if (checked.has(c)) continue;
    const orbit = caseOrbit(c);
    orbit.forEach((x) => checked.add(x));
    const folded = RE2JS.compile(RE2JS.quote(String.fromCodePoint(c)), RE2JS.CASE_INSENSITIVE);
    const re2 = [...folded.matchAll(everyCased)].map((m) => m[0].codePointAt(0) ?? 0).sort((a, b) => a - b);
    if (re2.join() !== orbit.join())
      problems.push(`U+${c.toString(16)}: ${orbit.join()} here, ${re2.join()} in RE2`);
  }
  // And no letter the table leaves alone folds, in RE2, with one it has.
  let uncased = '';
  let from = 0;
  for (const c of [...cased, 0x20000]) {
    if (c > from) uncased += `\\x{${from.toString(16)}}-\\x{${(c - 1).toString(16)}}`;
    from = c + 1;
  }
  const anyUncased = RE2JS.compile(`^[${uncased}]$`, RE2JS.CASE_INSENSITIVE);
  for (const c of cased) {
    if (anyUncased.test(String.fromCodePoint(c)))
      problems.push(`U+${c.toString(16)} folds with a letter left alone`);
  }
  assert.deepEqual(problems, []);
});
