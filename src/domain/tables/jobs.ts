import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse';
import { stringify as stringifyCsv } from 'csv-stringify';
import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { FileContents } from '../files/contents.ts';
import { ApiError } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, toJson } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import type { BotActor } from '../workspace/actors.ts';
import { tableSchema } from './columns.ts';
import type { Column } from './columns.ts';
import { rowView } from './record.ts';
import type { StoredRow, TableRecord } from './record.ts';
import type { TableRows } from './rows.ts';
import type { Tables } from './tables.ts';
import type { TableJobType } from '../../value-sets.ts';

export type ExportFormat = 'csv' | 'json';

/** A job as the API answers it. */
export interface TableJob {
  id: string;
  botId: string;
  tableId: string;
  type: TableJobType;
  status: Row<'table_jobs'>['status'];
  progress?: number;
  inputFileId: string | null;
  outputFileId: string | null;
  failedReason?: string;
  createdAt: string;
  updatedAt: string;
}

interface JobOptions {
  format?: ExportFormat;
  compress?: boolean;
}

/** Jobs a table answers in getTableJobs: the newest. */
export const JOBS_LISTED = 50;
/** Rows read or written per statement by a job. */
const BATCH = 1000;
/** A job whose process died this many times is given up. */
export const MAX_JOB_ATTEMPTS = 3;
/** Errors of an import that are named in its failure reason (the count says how many more). */
const ERRORS_NAMED = 5;

function jobView(row: Row<'table_jobs'>): TableJob {
  return {
    id: row.id,
    botId: row.bot_id,
    tableId: row.table_id,
    type: row.type,
    status: row.status,
    ...(row.progress !== null && { progress: row.progress }),
    inputFileId: row.input_file_id,
    outputFileId: row.output_file_id,
    ...(row.failure_reason !== null && { failedReason: row.failure_reason }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A row as exported: user columns only, in schema order. */
function exportedRow(columns: Column[], stored: StoredRow): JsonObject {
  const row = rowView(columns, stored);
  return Object.fromEntries(columns.map((c) => [c.name, row[c.name] ?? null]));
}

/**
 * CSV cells: text is always quoted and null is an empty unquoted cell, so an import tells "" from null;
 * objects and arrays are JSON text.
 */
function csvCell(column: Column, value: Json): string | number | boolean | null {
  if (value === null) return null;
  if (column.type === 'object' || column.type === 'array') return JSON.stringify(value);
  return typeof value === 'object' ? JSON.stringify(value) : value;
}

/** A CSV cell back to the column's value (what the row check then validates). */
function csvValue(column: Column | undefined, text: string, quoted: boolean): Json {
  if (!quoted && text === '') return null;
  if (!column) return text;
  switch (column.type) {
    case 'number': {
      const number = Number(text);
      return text.trim() === '' || Number.isNaN(number) ? text : number;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'object':
    case 'array':
      try {
        return JSON.parse(text) as Json;
      } catch {
        return text;
      }
    default:
      return text;
  }
}

/** An import that cannot be done: the job fails with this reason, and no row is written. */
class ImportRefused extends Error {}

/**
 * Work on a table that runs off the request: exports to a Files API file, imports from one. A job is
 * a row of `table_jobs`, claimed with a lease by the engine's worker (engine/table-jobs.ts), so a job
 * outlives the process that was running it.
 */
export class TableJobs {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly tables: Tables,
    private readonly rows: TableRows,
    private readonly contents: FileContents,
  ) {}

  onQueued(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }

  async startExport(
    actor: BotActor,
    ref: string,
    format: ExportFormat,
    compress: boolean,
  ): Promise<TableJob> {
    const table = await this.tables.require(this.store.db, actor, ref);
    return this.queue(actor, table, 'export', { format, compress }, null);
  }

  async startImport(actor: BotActor, ref: string, fileId: string): Promise<TableJob> {
    const table = await this.tables.require(this.store.db, actor, ref);
    const file = await this.contents.open(actor, fileId);
    return this.queue(actor, table, 'import', {}, file.id);
  }

  async list(actor: BotActor, ref: string): Promise<TableJob[]> {
    const table = await this.tables.require(this.store.db, actor, ref);
    const rows = await this.store.db
      .selectFrom('table_jobs')
      .selectAll()
      .where('table_id', '=', table.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(JOBS_LISTED)
      .execute();
    return rows.map(jobView);
  }

  private async queue(
    actor: BotActor,
    table: TableRecord,
    type: TableJobType,
    options: JobOptions,
    inputFileId: string | null,
  ): Promise<TableJob> {
    const now = nowIso();
    const row = await this.store.db
      .insertInto('table_jobs')
      .values({
        id: newId('tableJob'),
        bot_id: actor.botId,
        table_id: table.id,
        type,
        status: 'pending',
        progress: 0,
        input_file_id: inputFileId,
        output_file_id: null,
        options: toJson(options),
        failure_reason: null,
        lease_owner: null,
        lease_until: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (const wake of this.listeners) wake();
    return jobView(row);
  }

  // The worker's side (a LeasedQueue: engine/leased-work.ts)

  async releaseStaleClaims(): Promise<void> {}

  /** Claims up to `limit` items; `more` tells whether others wait. */
  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: Row<'table_jobs'>[]; more: boolean }> {
    const now = nowIso();
    const candidates = await this.store.db
      .selectFrom('table_jobs')
      .select('id')
      .where('status', 'in', ['pending', 'in_progress'])
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('created_at')
      .limit(limit + 1)
      .execute();
    const until = new Date(Date.now() + leaseMs).toISOString();
    const claimed: Row<'table_jobs'>[] = [];
    for (const { id } of candidates.slice(0, limit)) {
      const row = await this.store.db
        .updateTable('table_jobs')
        .set((eb) => ({ lease_owner: owner, lease_until: until, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', id)
        .where('status', 'in', ['pending', 'in_progress'])
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return { items: claimed, more: candidates.length > limit };
  }

  async renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.store.db
      .updateTable('table_jobs')
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', ids)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Runs one claimed job to its end: `completed`, or `failed` with the reason. */
  async run(owner: string, job: Row<'table_jobs'>): Promise<void> {
    try {
      // The job acts as the bot itself, as its call did.
      const actor = await this.tables.botActor(this.store.db, job.bot_id);
      // Its bot deleted meanwhile (the job goes with it): the claim lapses.
      if (!actor) throw new Error(`bot ${job.bot_id} of table job ${job.id} is gone`);
      if (job.attempts > MAX_JOB_ATTEMPTS) {
        throw new ImportRefused(`The job was interrupted ${MAX_JOB_ATTEMPTS} times; it is not tried again`);
      }
      const table = await this.tables.require(this.store.db, actor, job.table_id);
      await this.update(owner, job.id, { status: 'in_progress' });
      const output =
        job.type === 'export'
          ? await this.export(owner, actor, table, job)
          : (await this.import(owner, actor, table, job), null);
      await this.update(owner, job.id, { status: 'completed', progress: 1, output_file_id: output });
    } catch (err) {
      const expected = err instanceof ImportRefused || err instanceof ApiError;
      if (!expected) throw err;
      await this.update(owner, job.id, { status: 'failed', failure_reason: err.message });
    }
  }

  private async update(
    owner: string,
    id: string,
    fields: Partial<Pick<Row<'table_jobs'>, 'status' | 'progress' | 'output_file_id' | 'failure_reason'>>,
  ): Promise<void> {
    await this.store.db
      .updateTable('table_jobs')
      .set({ ...fields, updated_at: nowIso() })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Writes the table's rows to a file (in a temporary folder, then into the Files API); answers its id. */
  private async export(
    owner: string,
    actor: BotActor,
    table: TableRecord,
    job: Row<'table_jobs'>,
  ): Promise<string> {
    const options = fromJson<JobOptions>(job.options);
    const format = options.format ?? 'csv';
    const compress = options.compress ?? true;
    const folder = await mkdtemp(path.join(tmpdir(), 'parley-export-'));
    const file = path.join(folder, 'export');
    try {
      const { rows: total } = await this.tables.counts(this.store.db, table);
      let done = 0;
      const pages = this.pages(table, async (n) => {
        done += n;
        await this.update(owner, job.id, { progress: total === 0 ? 1 : Math.min(0.99, done / total) });
      });
      const encoded = format === 'csv' ? this.csvExport(table, pages) : this.jsonExport(table, pages);
      const stages: (Readable | Transform | Writable)[] = [encoded];
      if (compress) stages.push(createGzip());
      stages.push(createWriteStream(file));
      await pipeline(stages);
      const { size } = await stat(file);
      const extension = `${format}${compress ? '.gz' : ''}`;
      const stored = await this.contents.put(
        actor,
        {
          key: `tables/${table.name}/export-${job.id}.${extension}`,
          contentType: compress ? 'application/gzip' : format === 'csv' ? 'text/csv' : 'application/json',
          size,
        },
        createReadStream(file),
      );
      return stored.id;
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }

  /** The rows of a table in id order, a page per statement. */
  private async *pages(
    table: TableRecord,
    progress: (n: number) => Promise<void>,
  ): AsyncGenerator<StoredRow[]> {
    let after = 0;
    for (;;) {
      const { rows } = await sql<StoredRow>`
        select * from ${sql.id(table.storage)} where id > ${after} order by id limit ${BATCH}`.execute(
        this.store.db,
      );
      if (rows.length === 0) return;
      yield rows;
      await progress(rows.length);
      after = Number(rows[rows.length - 1]?.id);
    }
  }

  private csvExport(table: TableRecord, pages: AsyncGenerator<StoredRow[]>): Readable {
    const columns = table.columns;
    const csv = stringifyCsv({
      header: true,
      columns: columns.map((c) => c.name),
      quoted_string: true,
      cast: { boolean: (b) => String(b) },
    });
    const rows = Readable.from(
      (async function* () {
        for await (const page of pages) {
          for (const stored of page) {
            const row = exportedRow(columns, stored);
            yield columns.map((c) => csvCell(c, row[c.name] ?? null));
          }
        }
      })(),
    );
    return rows.pipe(csv);
  }

  private jsonExport(table: TableRecord, pages: AsyncGenerator<StoredRow[]>): Readable {
    const columns = table.columns;
    const head = `{"table":${JSON.stringify({ name: table.name, schema: tableSchema(columns), keyColumn: table.keyColumn })},"rows":[`;
    return Readable.from(
      (async function* () {
        yield head;
        let first = true;
        for await (const page of pages) {
          const text = page.map((stored) => JSON.stringify(exportedRow(columns, stored))).join(',');
          yield `${first ? '' : ','}${text}`;
          first = false;
        }
        yield ']}';
      })(),
    );
  }

  /**
   * Adds the rows of the job's file (CSV with a header of column names, or JSON: `{ rows: [...] }` as
   * exported, or an array of rows) to the table, in one transaction: a file with a bad row adds nothing,
   * and the job fails naming the rows.
   */
  private async import(
    owner: string,
    actor: BotActor,
    table: TableRecord,
    job: Row<'table_jobs'>,
  ): Promise<void> {
    if (!job.input_file_id) throw new ImportRefused('The job names no file');
    const file = await this.contents.open(actor, job.input_file_id);
    const bytes = Buffer.concat(await Readable.from(file.read()).toArray());
    const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
    const text = gzipped ? await gunzip(bytes) : bytes;
    const rows = looksLikeJson(text) ? jsonRows(text) : await csvRows(table.columns, text);
    await this.store.db.transaction().execute(async (trx) => {
      const errors: string[] = [];
      for (let i = 0; i < rows.length; i += BATCH) {
        const { report } = await this.rows.insertChecked(trx, table, rows.slice(i, i + BATCH), i);
        errors.push(...(report.errors ?? []));
      }
      if (errors.length > 0) {
        const more = errors.length > ERRORS_NAMED ? ` (and ${errors.length - ERRORS_NAMED} more)` : '';
        throw new ImportRefused(`No row was imported: ${errors.slice(0, ERRORS_NAMED).join('; ')}${more}`);
      }
    });
    this.store.sql.rowsWritten(this.store.db, table.storage, rows.length);
    await this.update(owner, job.id, { status: 'finalizing', progress: 0.99 });
  }
}

async function gunzip(bytes: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(Readable.from([bytes]), createGunzip(), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) chunks.push(chunk);
  }).catch(() => {
    throw new ImportRefused('The file is not valid gzip');
  });
  return Buffer.concat(chunks);
}

function looksLikeJson(text: Buffer): boolean {
  const first = text.toString('utf8', 0, Math.min(text.length, 64)).trimStart()[0];
  return first === '{' || first === '[';
}

function jsonRows(text: Buffer): JsonObject[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.toString('utf8'));
  } catch {
    throw new ImportRefused('The file is not valid JSON');
  }
  const rows = Array.isArray(parsed)
    ? parsed
    : typeof parsed === 'object' && parsed !== null && 'rows' in parsed && Array.isArray(parsed.rows)
      ? parsed.rows
      : undefined;
  if (!rows || !rows.every((r: unknown) => typeof r === 'object' && r !== null && !Array.isArray(r))) {
    throw new ImportRefused('A JSON import is an array of rows, or an object with its rows in "rows"');
  }
  return rows as JsonObject[];
}

async function csvRows(columns: Column[], text: Buffer): Promise<JsonObject[]> {
  const rows: JsonObject[] = [];
  let header: string[] | undefined;
  const parser = parseCsv({
    bom: true,
    relax_column_count: false,
    cast: (value, context) => ({ value, quoted: context.quoting }),
  });
  try {
    for await (const record of Readable.from([text]).pipe(parser) as AsyncIterable<
      { value: string; quoted: boolean }[]
    >) {
      if (!header) {
        header = record.map((cell) => cell.value);
        continue;
      }
      const row: JsonObject = {};
      record.forEach((cell, i) => {
        const name = header?.[i] ?? '';
        row[name] = csvValue(
          columns.find((c) => c.name === name),
          cell.value,
          cell.quoted,
        );
      });
      rows.push(row);
    }
  } catch (err) {
    throw new ImportRefused(`The file is not valid CSV: ${(err as Error).message}`);
  }
  return rows;
}
