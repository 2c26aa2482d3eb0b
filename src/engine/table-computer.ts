import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { Column } from '../domain/tables/columns.ts';
import { computedOf } from '../domain/tables/computed.ts';
import type { ColumnComputer, ComputedOutcome } from '../domain/tables/computed.ts';
import type { TableRecord, TableRow } from '../domain/tables/record.ts';
import type { BotActor } from '../domain/workspace/actors.ts';
import type { BotClient } from './bot-client.ts';
import { CallChain } from './call-chain.ts';
import type { LoadedBots } from './loaded-bot.ts';
import { DEFAULT_LIMITS } from './sandbox/types.ts';
import type { BotProgram, Sandbox } from './sandbox/types.ts';

/** How often rows whose computed columns are due are looked for, besides when a write wakes the worker. */
const POLL_MS = 1000;

/**
 * Computes tables' code columns in the bot sandbox: each column's code is a unit of a program of its
 * own (per table and code), run with the row as `input` (and `row`), and bot code's `client` acting as
 * the bot. A worker computes the rows written without `waitComputed`.
 */
export class TableComputer implements ColumnComputer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  /** Each table's current program version: the previous one is unloaded when its code changes. */
  private readonly versions = new Map<string, string>();

  constructor(
    private readonly domain: Domain,
    private readonly sandbox: Sandbox,
    private readonly client: BotClient,
    private readonly bots: LoadedBots,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    this.domain.tableRows.useComputer(this);
    this.timer = setInterval(() => this.wake(), POLL_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.domain.tableRows
      .computeDue()
      .then(() => undefined)
      .catch((err: unknown) => this.log.warn({ err }, 'computing table columns failed; trying again'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async compute(
    actor: BotActor,
    table: TableRecord,
    row: TableRow,
    columns: Column[],
  ): Promise<Record<string, ComputedOutcome>> {
    const program = this.program(table);
    const env = (await this.bots.get(table.botId))?.env ?? {};
    const outcomes: Record<string, ComputedOutcome> = {};
    for (const column of columns) {
      const outcome = await this.sandbox.call(
        program,
        column.name,
        { event: {}, workflow: {}, conversation: {}, user: {}, bot: {}, env, turn: {}, input: row },
        this.client.handler(actor, CallChain.root()),
      );
      this.domain.botLogs.append(
        table.botId,
        outcome.logs.map((l) => ({ ...l, timestamp: l.time })),
      );
      outcomes[column.name] = outcome.ok
        ? { value: outcome.value }
        : { error: `the code failed (${outcome.kind}): ${outcome.message}` };
    }
    return outcomes;
  }

  private program(table: TableRecord): BotProgram {
    const units: Record<string, string> = {};
    for (const column of table.columns) {
      const code = computedOf(column)?.code;
      // The row is `input`, as for actions, and `row` too, as the column's code reads best.
      if (code !== undefined) units[column.name] = `const row = input;\n${code}`;
    }
    const hash = createHash('sha256').update(JSON.stringify(units)).digest('hex').slice(0, 16);
    const versionId = `table:${table.id}:${hash}`;
    const previous = this.versions.get(table.id);
    if (previous !== versionId) {
      if (previous) void this.sandbox.unload(previous).catch(() => undefined);
      this.versions.set(table.id, versionId);
    }
    return { versionId, botId: table.botId, units, limits: DEFAULT_LIMITS };
  }
}
