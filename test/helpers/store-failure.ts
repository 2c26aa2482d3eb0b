import type { TestServer } from './server.ts';

/**
 * Runs `work` while the store cannot read `table`: it is renamed away, then back. A real failure of
 * every statement on it (no mock), as a broken or half-migrated database would answer.
 */
export async function withoutTable<T>(t: TestServer, table: string, work: () => Promise<T>): Promise<T> {
  const { db } = t.server.store;
  await db.schema.alterTable(table).renameTo(`${table}_away`).execute();
  try {
    return await work();
  } finally {
    await db.schema.alterTable(`${table}_away`).renameTo(table).execute();
  }
}

/** The status and error type of an answer (none for a page): a failure of the store answers a fault. */
export async function outcomeOf(res: Response): Promise<{ status: number; type: unknown }> {
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').includes('application/json');
  return { status: res.status, type: isJson ? (JSON.parse(text) as { type?: unknown }).type : undefined };
}

export const STORE_FAULT = { status: 500, type: 'Internal' };
