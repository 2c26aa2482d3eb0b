import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@botpress/client';
import type { RawResponse } from './runtime.ts';
import { waitFor } from './runtime.ts';

export type TableRow = Awaited<ReturnType<Client['findTableRows']>>['rows'][number];
export type TableJob = Awaited<ReturnType<Client['getTableJobs']>>['jobs'][number];
export type TableRecord = Awaited<ReturnType<Client['getTable']>>['table'];

/** The fields every row carries besides its user columns. */
export const SYSTEM_FIELDS = ['id', 'createdAt', 'updatedAt', 'computed', 'stale', 'similarity'];

/** The given columns of a row, absent ones as null (an answer may leave a null column out or give it). */
export function pick(row: Record<string, unknown> | undefined, columns: string[]): Record<string, unknown> {
  assert.ok(row, 'a row');
  return Object.fromEntries(columns.map((c) => [c, row[c] ?? null]));
}

/** A row's user columns (everything but the system fields), null ones left out. */
export function userColumns(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).filter(([k, v]) => !SYSTEM_FIELDS.includes(k) && v !== null && v !== undefined),
  );
}

/** Each column of a table's schema: its type (and format) and its `x-zui.index`. */
export function columnsOf(
  table: TableRecord,
): Record<string, { type: string; format?: string; index: number }> {
  return Object.fromEntries(
    Object.entries(table.schema.properties).map(([name, p]) => [
      name,
      { type: p.type, ...(p.format && { format: p.format }), index: p['x-zui'].index },
    ]),
  );
}

/** The ids of rows, in order. */
export const rowIds = (rows: { id: number }[]): number[] => rows.map((r) => r.id);

/** Inserts rows in batches (1,000 a call, the API's maximum), asserting that none is refused. */
export async function insertRows(
  client: Client,
  table: string,
  rows: Record<string, unknown>[],
  batch = 1000,
): Promise<void> {
  for (let i = 0; i < rows.length; i += batch) {
    const res = await client.createTableRows({ table, rows: rows.slice(i, i + batch) });
    assert.deepEqual(res.errors ?? [], [], `batch at ${i} has no refused row`);
    assert.equal(res.rows.length, Math.min(batch, rows.length - i));
  }
}

/** Every row of a table, by id, walked 1,000 at a time with limit/offset. */
export async function allRows(client: Client, table: string): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await client.findTableRows({ table, limit: 1000, offset, orderBy: 'id' });
    rows.push(...page.rows);
    if (!page.hasMore) return rows;
    assert.ok(offset < 1_000_000, 'the walk ends');
  }
}

/** Waits until getTableJobs lists job `id` as completed or failed; answers the job. */
export function jobEnded(client: Client, table: string, id: string, timeoutMs = 60_000): Promise<TableJob> {
  return waitFor(
    `table job ${id} to end`,
    async () => {
      const { jobs } = await client.getTableJobs({ table });
      const job = jobs.find((j) => j.id === id);
      return job && (job.status === 'completed' || job.status === 'failed') ? job : undefined;
    },
    timeoutMs,
    50,
  );
}

/** Waits for job `id` and asserts it completed. */
export async function jobCompleted(client: Client, table: string, id: string): Promise<TableJob> {
  const job = await jobEnded(client, table, id);
  assert.equal(job.status, 'completed', `job ${id} (${job.type}) completed: ${JSON.stringify(job)}`);
  return job;
}

/** The bytes of a Files API file, downloaded from the `url` getFile hands out. */
export async function downloadFile(client: Client, id: string): Promise<Buffer> {
  const { file } = await client.getFile({ id });
  const res = await fetch(file.url);
  assert.equal(res.status, 200, `download of file ${id} answers 200`);
  return Buffer.from(await res.arrayBuffer());
}

export const isGzip = (bytes: Buffer): boolean => bytes[0] === 0x1f && bytes[1] === 0x8b;

/** Asserts two lists of rows are equal, naming the first row that differs (not a 10,000-row diff). */
export function assertSameRows(actual: unknown[], expected: unknown[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: as many rows`);
  const first = actual.findIndex((row, i) => !isDeepStrictEqual(row, expected[i]));
  assert.equal(
    first,
    -1,
    `${what}: row ${first} differs: ${JSON.stringify(actual[first])} vs ${JSON.stringify(expected[first])}`,
  );
}

/** Asserts a raw answer is a 4xx with the error body `{id, code, type, message}`; answers a problem or undefined. */
export function clientErrorProblem(res: RawResponse): string | undefined {
  const body = res.body as Record<string, unknown> | null;
  if (res.status < 400 || res.status >= 500) return `status ${res.status}: ${JSON.stringify(res.body)}`;
  if (!body || typeof body !== 'object') return `status ${res.status} without a JSON body`;
  if (body.code !== res.status) return `body.code ${String(body.code)} is not the status ${res.status}`;
  for (const key of ['id', 'type', 'message']) {
    if (typeof body[key] !== 'string') return `body.${key} is not a string: ${JSON.stringify(body)}`;
  }
  return undefined;
}
