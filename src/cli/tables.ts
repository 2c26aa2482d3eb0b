import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError } from './errors.ts';
import type { FilesApi } from './files-api.ts';
import { CONNECTION, CONNECTION_FLAGS, CONNECTION_SETTINGS, connect } from './files.ts';
import { printHelp, wantsHelp } from './help.ts';
import { columnSchemas } from './tables-api.ts';
import type { RemoteTable, RemoteTableJob, TablesClient } from './tables-api.ts';
import { userPath } from './paths.ts';

const TABLES_USAGE = `usage: parley tables list [--json] ${CONNECTION}
  parley tables export <table> [--format csv|json] [--out FILE] [--gzip] ${CONNECTION}
  parley tables import <table> <file> ${CONNECTION}
${CONNECTION_SETTINGS}`;
const TABLES_HELP = `${TABLES_USAGE}

A bot's tables, through the Tables API (a table is named by its name or its id).
  list       Each table: its id, name, number of rows and columns (--json: a JSON array).
  export     Exports the table's rows (--format csv, the default, or json; --gzip compresses them) and
             writes the file to --out, or to stdout.
  import     Uploads a CSV or JSON file (gzipped or not) and adds its rows to the table, all or none;
             prints how many rows the table has then. A refused row fails the import with the reason.
`;

const FLAGS = {
  ...CONNECTION_FLAGS,
  json: { type: 'boolean' },
  format: { type: 'string' },
  out: { type: 'string' },
  gzip: { type: 'boolean' },
} as const;

/** How long a job may run before the command gives up on it (the job goes on). */
const JOB_TIMEOUT_MS = 10 * 60_000;

const print = (line: string) => process.stdout.write(`${line}\n`);
const rowCount = (n: number) => `${n} row${n === 1 ? '' : 's'}`;

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** A column's place (its `x-zui.index`; 0 when it has none). */
function indexOf(column: Record<string, unknown>): number {
  const zui = column['x-zui'];
  const index: unknown = typeof zui === 'object' && zui !== null ? Reflect.get(zui, 'index') : undefined;
  return typeof index === 'number' ? index : 0;
}

/** A table's columns in their order, with their types (`date-time` for a date). */
function columnsOf(table: RemoteTable): { name: string; type: string }[] {
  return Object.entries(columnSchemas(table))
    .sort(([, a], [, b]) => indexOf(a) - indexOf(b))
    .map(([name, p]) => ({ name, type: text(p.format) ?? text(p.type) ?? 'unknown' }));
}

/** Waits for a job of the table to end; answers it completed, or throws its `failedReason`. */
async function jobCompleted(
  api: TablesClient,
  table: string,
  started: RemoteTableJob,
  doing: string,
): Promise<RemoteTableJob> {
  const deadline = Date.now() + JOB_TIMEOUT_MS;
  for (;;) {
    const { jobs } = await api.getTableJobs({ table });
    const job = jobs.find((j) => j.id === started.id);
    if (!job) throw new CliError(`${doing} failed: job ${started.id} is no longer listed`);
    if (job.status === 'failed')
      throw new CliError(`${doing} failed: ${job.failedReason ?? 'no reason given'}`);
    if (job.status === 'completed') return job;
    if (Date.now() > deadline)
      throw new CliError(`${doing}: job ${job.id} is still ${job.status} after ${JOB_TIMEOUT_MS / 1000} s`);
    await sleep(200);
  }
}

/** Downloads a Files API file (from the signed `url` getFile answers) to a local file, or to stdout. */
async function download(files: FilesApi, id: string, out: string | undefined): Promise<void> {
  const { url } = await files.get(id);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new CliError(`downloading file ${id} failed: ${(err as Error).message}`);
  }
  if (!response.ok || !response.body)
    throw new CliError(`downloading file ${id} failed: HTTP ${response.status} ${await response.text()}`);
  const body = Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
  if (out === undefined) await pipeline(body, process.stdout, { end: false });
  else await pipeline(body, createWriteStream(userPath(out)));
}

/** `parley tables list|export|import`: a bot's tables through the Tables API. */
export async function tablesCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(TABLES_HELP);
  const [action, ...rest] = argv;
  if (action !== 'list' && action !== 'export' && action !== 'import') throw new CliError(TABLES_USAGE);
  const { api: files, flags, positionals } = connect(rest, TABLES_USAGE, FLAGS);
  const api = files.tables;

  if (action === 'list') {
    if (positionals.length > 0) throw new CliError(TABLES_USAGE);
    const { tables } = await api.listTables();
    const listed = [];
    for (const table of tables) {
      const { rows } = await api.getTable({ table: table.id });
      listed.push({ id: table.id, name: table.name, rows, columns: columnsOf(table) });
    }
    if (flags.json === true) print(JSON.stringify(listed, null, 2));
    else
      for (const t of listed)
        print(
          `${t.id}  ${t.name}  ${rowCount(t.rows)}  ${t.columns.map((c) => `${c.name}:${c.type}`).join(', ')}`,
        );
    return 0;
  }

  if (action === 'export') {
    const [table] = positionals;
    if (!table || positionals.length > 1) throw new CliError(TABLES_USAGE);
    const format = typeof flags.format === 'string' ? flags.format : 'csv';
    if (format !== 'csv' && format !== 'json') throw new CliError('--format must be csv or json');
    const out = typeof flags.out === 'string' ? flags.out : undefined;
    const compress = flags.gzip === true;
    const { job } = await api.exportTable({ table, format, compress });
    const done = await jobCompleted(api, table, job, `exporting ${table}`);
    if (!done.outputFileId) throw new CliError(`exporting ${table} failed: the job names no file`);
    await download(files, done.outputFileId, out);
    if (out !== undefined) print(`Exported ${table} to ${out} (${format}${compress ? ', gzipped' : ''})`);
    return 0;
  }

  const [table, local] = positionals;
  if (!table || !local || positionals.length > 2) throw new CliError(TABLES_USAGE);
  const file = userPath(local);
  if (!(await stat(file).catch(() => undefined))?.isFile()) throw new CliError(`${local} is not a file`);
  // The table first: a missing one is said before anything is uploaded.
  const { table: target } = await api.getTable({ table });
  const uploaded = await files.upload(
    `tables/${target.name}/import-${Date.now()}-${path.basename(file)}`,
    file,
  );
  try {
    const { job } = await api.importTable({ table, fileId: uploaded.id });
    await jobCompleted(api, table, job, `importing ${local} into ${target.name}`);
  } finally {
    // The uploaded copy served its purpose; a leftover one is no reason to fail the command.
    await files.delete(uploaded.id).catch(() => undefined);
  }
  const { rows } = await api.getTable({ table });
  print(`Imported ${local} into ${target.name}: it has ${rowCount(rows)}`);
  return 0;
}
