import assert from 'node:assert/strict';
import { isApiError } from '@botpress/client';
import type { Client } from '@botpress/client';
import type { TestServer } from './server.ts';

/** A bot of the test workspace, with a bot API key and an official client acting as that bot. */
export interface TestBot {
  botId: string;
  /** The bot API key's value. */
  key: string;
  /** `new Client({ apiUrl, token: key, botId })`: what bot code uses on the Runtime API. */
  client: Client;
}

/** Creates a bot through the Admin API, a bot API key for it, and a Runtime client using that key. */
export async function createTestBot(t: TestServer, name = 'runtime-bot'): Promise<TestBot> {
  const admin = t.client();
  const { bot } = await admin.createBot({ name });
  const { value } = await admin.createBotApiKey({ botId: bot.id });
  return {
    botId: bot.id,
    key: value,
    client: t.client({ token: value, botId: bot.id, workspaceId: undefined }),
  };
}

/**
 * Polls `probe` until it returns a value other than undefined/null/false, and returns that value.
 * Fails after `timeoutMs` with `what` in the message.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Asserts that `promise` rejects with an API error of class `errorClass` (and, if given, a message matching
 * `message`), and returns the error.
 */
export async function rejectsWith(
  promise: Promise<unknown>,
  errorClass: ErrorClass,
  message?: RegExp,
): Promise<Error & { code: number; type: string }> {
  // The client's classes are minified: name the expected one by the API error type it carries.
  const expected = errorTypeOf(errorClass);
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected a ${expected} error, but the call succeeded`);
  assert.ok(caught instanceof errorClass, `expected a ${expected} error, got ${describeError(caught)}`);
  assert.ok(isApiError(caught));
  if (message) assert.match(caught.message, message);
  return caught;
}

function errorTypeOf(errorClass: ErrorClass): string {
  try {
    const type: unknown = Reflect.get(Reflect.construct(errorClass, ['']), 'type');
    return typeof type === 'string' ? type : errorClass.name;
  } catch {
    return errorClass.name;
  }
}

function describeError(err: unknown): string {
  if (isApiError(err)) return `${err.type} (${err.code}): ${err.message}`;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Asserts that `promise` rejects with an API error whose code is 4xx, and returns it. */
export async function rejects4xx(promise: Promise<unknown>): Promise<{ code: number; type: string }> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, 'expected a 4xx API error, but the call succeeded');
  assert.ok(isApiError(caught), `expected an API error, got ${describeError(caught)}`);
  assert.ok(
    caught.code >= 400 && caught.code < 500,
    `expected a 4xx code, got ${caught.code} ${caught.type}`,
  );
  return caught;
}

/** ISO 8601, UTC, with milliseconds and `Z`. */
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function assertTimestamp(value: unknown, what = 'timestamp'): void {
  assert.equal(typeof value, 'string', `${what} is a string`);
  assert.match(value as string, ISO_UTC_MS, `${what} is ISO 8601 UTC with milliseconds`);
}

/** A prefixed id (`conv_…`) of 28 to 36 characters. */
export function assertId(value: unknown, prefix: string): void {
  assert.equal(typeof value, 'string', `${prefix} id is a string`);
  const id = value as string;
  assert.ok(id.startsWith(`${prefix}_`), `${id} starts with ${prefix}_`);
  assert.ok(id.length >= 28 && id.length <= 36, `${id} is 28 to 36 characters long (${id.length})`);
}

/** An id of the right shape that no server handed out. */
export function unknownId(prefix: string): string {
  return `${prefix}_01JZZZZZZZZZZZZZZZZZZZZZZZ`;
}

/** The ids of a list's items, in order. */
export const ids = (items: { id: string }[]): string[] => items.map((i) => i.id);

/** A unique string, for tag values and names that must not collide between tests. */
export function unique(prefix = 'v'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

export interface RawResponse {
  status: number;
  body: unknown;
}

/** A plain HTTP call to the Runtime API as `bot`, for what the client cannot express (status codes, raw bodies). */
export async function rawRuntime(
  t: TestServer,
  bot: TestBot,
  method: string,
  path: string,
  body?: unknown,
): Promise<RawResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${bot.key}`, 'x-bot-id': bot.botId };
  let payload: string | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(`${t.url}${path}`, { method, headers, body: payload });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

/** The shape of an error body, for raw calls. */
export function assertErrorBody(res: RawResponse, status: number, type: string): void {
  assert.equal(res.status, status, `status ${status} (got ${res.status}: ${JSON.stringify(res.body)})`);
  const body = res.body as Record<string, unknown>;
  assert.equal(body.type, type);
  assert.equal(body.code, status);
  assert.equal(typeof body.id, 'string');
  assert.equal(typeof body.message, 'string');
}

/**
 * Walks a paginated list page by page, calling `between` after each page (to write concurrently), and returns
 * every page's ids.
 */
export async function walkPages(
  fetchPage: (nextToken: string | undefined) => Promise<{ ids: string[]; nextToken?: string }>,
  between: (pageIndex: number) => Promise<void> = async () => {},
  maxPages = 100,
): Promise<string[][]> {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = await fetchPage(token);
    pages.push(page.ids);
    token = page.nextToken;
    if (token) await between(pages.length - 1);
    assert.ok(pages.length <= maxPages, 'the walk ends');
  } while (token);
  return pages;
}

/** Asserts that `ids` has no duplicate. */
export function assertNoRepeats(ids: string[]): void {
  const seen = new Set<string>();
  const repeated = ids.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
  assert.deepEqual(repeated, [], 'no id is served twice');
}

/** A metric of the server's /metrics, summed over its labels' series (the read itself runs no statement). */
async function metricTotal(t: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** The SQL statements the server has run so far. */
export function statementsRun(t: TestServer): Promise<number> {
  return metricTotal(t, 'parley_sql_statements_total');
}

/** Turns the server has ended so far, whatever their outcome. */
export function turnsEnded(t: TestServer): Promise<number> {
  return metricTotal(t, 'parley_turn_duration_seconds_count');
}

/**
 * The costs of repeated tries (statements run, say), for the least of them: the server's polls may add
 * to any one try. Tries until `counted` tries were counted and the least came to `expected`, or `tries`
 * in all; `measure` answers undefined for a try that does not count.
 */
export async function leastCosts(
  expected: number,
  limits: { tries: number; counted: number },
  measure: (i: number) => Promise<number | undefined>,
): Promise<number[]> {
  const costs: number[] = [];
  for (let i = 0; i < limits.tries && (costs.length < limits.counted || Math.min(...costs) > expected); i++) {
    const cost = await measure(i);
    if (cost !== undefined) costs.push(cost);
  }
  return costs;
}
