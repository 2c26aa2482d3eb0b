import { readFile } from 'node:fs/promises';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BUS_REJECTIONS } from './bus/rejections.ts';
import { ADMISSION_REFUSALS } from './domain/queue/admission.ts';
import { ADMISSION_METRICS } from './contract/metrics.ts';
import type { AdmissionListener, AdmissionState } from './domain/queue/admission.ts';

/** What the queue looks like at a scrape: events waiting, and how long the oldest has waited. */
export interface QueueStats {
  depth: number;
  oldestAgeSeconds: number;
}

/** Where the gauges read their values when Prometheus scrapes, set by the parts that know them. */
export interface MetricSources {
  queue?: () => Promise<QueueStats>;
  sandboxPids?: () => number[];
  /** Admission control's view of the queue (absent: admission is off). */
  admission?: () => AdmissionState;
}

/** How long one answer of the queue's statistics serves the gauges (one scrape). */
const QUEUE_STATS_REUSE_MS = 1000;

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * One server's metrics, in the Prometheus format (`GET /metrics`): requests by route and status, turn
 * and action latency, the queue's depth and age, sandbox calls, restarts and memory, SQL statements and
 * commits, open event streams, live bus messages dropped, connections refused, and the process's own
 * (prom-client's defaults). A registry per server, so that servers in one process
 * (the tests) count apart.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly sources: MetricSources = {};

  readonly requests = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP requests by method, route (its pattern) and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly turns = new Histogram({
    name: 'parley_turn_duration_seconds',
    help: "Bots' turns by outcome (processed, ignored, failed, retrying)",
    labelNames: ['outcome'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly actions = new Histogram({
    name: 'parley_action_duration_seconds',
    help: "Bots' own actions run by the engine, by outcome (ok, failed)",
    labelNames: ['outcome'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly sandboxRestarts = new Counter({
    name: 'parley_sandbox_restarts_total',
    help: 'Sandbox processes that died or were stopped, and were restarted',
    registers: [this.registry],
  });

  readonly sandboxCalls = new Counter({
    name: 'parley_sandbox_calls_total',
    help: 'Calls into bot code (hooks, cards, actions), each a round trip to a sandbox process',
    registers: [this.registry],
  });

  readonly statements = new Counter({
    name: 'parley_sql_statements_total',
    help: 'SQL statements the store ran, transaction control included',
    registers: [this.registry],
  });

  readonly commits = new Counter({
    name: 'parley_sql_commits_total',
    help: 'Transactions the store committed (a write outside a transaction commits by itself, uncounted)',
    registers: [this.registry],
  });

  readonly openStreams = new Gauge({
    name: 'parley_open_event_streams',
    help: 'Event streams (Chat API and webchat listeners) open now',
    registers: [this.registry],
  });

  readonly busRejections = new Counter({
    name: 'parley_bus_messages_rejected_total',
    help: 'Messages received on the live bus (Redis or PostgreSQL) and dropped unread, by reason: unsigned, forged (signed with another secret), malformed, stale, replayed',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly connectionsRefused = new Counter({
    name: 'parley_connections_refused_total',
    help: 'Connections closed early: past the limit of one address or of all, or headers or a body too slow',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly admitted = new Counter({
    name: ADMISSION_METRICS.admitted,
    help: 'Messages and events from outside that admission control let in (with admission on)',
    registers: [this.registry],
  });

  readonly refused = new Counter({
    name: ADMISSION_METRICS.refused,
    help: 'Messages and events from outside refused with 429 while the engines were behind, by reason: share (the workspace held its share of the queue or more), ceiling (the queue was past twice its limit)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly countAdmission: AdmissionListener = (decision) => {
    if (decision.admitted) this.admitted.inc();
    else this.refused.inc({ reason: decision.reason });
  };

  /** Counts a statement the store ran (what a request or a turn costs is counted in statements). */
  countStatement(sql: string): void {
    this.statements.inc();
    if (sql === 'commit') this.commits.inc();
  }

  constructor() {
    const sources = this.sources;
    // Both queue gauges read one query's answer: a scrape asks the store once, not once per gauge.
    let latest: { at: number; stats: Promise<QueueStats | undefined> } | undefined;
    const queueStats = () => {
      if (!latest || Date.now() - latest.at > QUEUE_STATS_REUSE_MS) {
        latest = { at: Date.now(), stats: sources.queue?.() ?? Promise.resolve(undefined) };
      }
      return latest.stats;
    };
    new Gauge({
      name: 'parley_queue_depth',
      help: 'Events waiting for a turn (pending)',
      registers: [this.registry],
      async collect() {
        const stats = await queueStats();
        if (stats) this.set(stats.depth);
      },
    });
    new Gauge({
      name: 'parley_queue_oldest_age_seconds',
      help: 'How long the oldest pending event has waited',
      registers: [this.registry],
      async collect() {
        const stats = await queueStats();
        if (stats) this.set(stats.oldestAgeSeconds);
      },
    });
    new Gauge({
      name: 'parley_sandbox_resident_memory_bytes',
      help: 'Resident memory of each sandbox process',
      labelNames: ['pid'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const pid of sources.sandboxPids?.() ?? []) {
          const bytes = await residentBytes(pid);
          if (bytes !== undefined) this.set({ pid: String(pid) }, bytes);
        }
      },
    });
    const admissionGauge = (name: string, help: string, read: (state: AdmissionState) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const state = sources.admission?.();
          if (state) this.set(read(state));
        },
      });
    admissionGauge(
      ADMISSION_METRICS.queued,
      'Events waiting for a turn across the deployment, as admission control last read them',
      (s) => s.queued,
    );
    admissionGauge(
      ADMISSION_METRICS.entering,
      'Requests of this process let in by admission control that wait to store their event (for a connection, on PostgreSQL): counted in the queue',
      (s) => s.entering,
    );
    admissionGauge(
      ADMISSION_METRICS.limit,
      'The queue past which admission control refuses: PARLEY_ADMISSION_BACKLOG, or what the engines run in PARLEY_ADMISSION_WAIT_MS',
      (s) => s.limit,
    );
    admissionGauge(
      ADMISSION_METRICS.turnsPerSecond,
      "The deployment's turns a second, as this process estimates them",
      (s) => s.turnsPerSecond,
    );
    for (const reason of ADMISSION_REFUSALS) this.refused.inc({ reason }, 0);
    // Each reason shows from the start, at 0: an alert on a rise needs a value to rise from.
    for (const reason of BUS_REJECTIONS) this.busRejections.inc({ reason }, 0);
    collectDefaultMetrics({ register: this.registry, prefix: 'parley_' });
  }
}

/** A process's resident memory, where the system tells it (Linux's /proc); undefined elsewhere. */
async function residentBytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
