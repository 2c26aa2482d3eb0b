import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from './api/app.ts';
import { ConfigError, SETTINGS } from './config.ts';
import type { Config } from './config.ts';
import { proxyTrust } from './api/client-address.ts';
import { connectionBudget } from './descriptors.ts';
import type { ConnectionBudget } from './descriptors.ts';
import { bootstrap } from './domain/workspace/bootstrap.ts';
import type { BootstrapResult } from './domain/workspace/bootstrap.ts';
import { createDomain } from './domain/index.ts';
import type { Domain } from './domain/index.ts';
import { openBus } from './bus/index.ts';
import type { BusRejection } from './bus/rejections.ts';
import type { LiveBus } from './domain/live/conversation-log.ts';
import type { BotLogProblem } from './domain/bots/bot-log-buffer.ts';
import type { SearchFallback } from './domain/embeddings/ranking.ts';
import { Engine } from './engine/index.ts';
import { checkCompiledPackage } from './package/compiled.ts';
import { draftBuilder } from './package/draft-builder.ts';
import { StoreSweeper } from './engine/store-sweeper.ts';
import { FileIndexer } from './engine/file-indexer.ts';
import { WebhookSender } from './engine/webhook-sender.ts';
import { publicConnections } from './engine/egress/public-connections.ts';
import { publicOnly } from './domain/shared/public-lookup.ts';
import { TableJobRunner } from './engine/table-jobs.ts';
import { openStore } from './store/index.ts';
import type { Store } from './store/index.ts';
import { Metrics } from './metrics.ts';
import { VERSION } from './version.ts';

/** The least time between two warnings in the log about messages the bus dropped. */
const REJECTION_WARNING_INTERVAL_MS = 60_000;

export interface RunningServer {
  app: FastifyInstance;
  /** The store, for operations and tests that look at what was stored. */
  store: Store;
  /** The sweeps of scheduled events, expired states and old signals (a test may stop them to compare the store). */
  sweeper: StoreSweeper;
  domain: Domain;
  bus: LiveBus;
  /** The origin it listens on, e.g. `http://127.0.0.1:3000`. */
  url: string;
  firstStart: BootstrapResult;
  /** Stops accepting, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  // Store errors come before the app's logger exists only if the store fails at once; then they are thrown.
  let reportStoreError: (err: Error) => void = () => {};
  const metrics = new Metrics();
  const store = await openStore(config.store, {
    onError: (err) => reportStoreError(err),
    onStatement: (sql) => metrics.countStatement(sql),
  });
  let bus: LiveBus | undefined;
  let limiterRedis: Redis | undefined;
  // Bus errors come before the app's logger exists only if the bus fails at once; then they are thrown.
  let reportBusError: (err: unknown) => void = () => {};
  let warnOfRejection: (reason: BusRejection) => void = () => {};
  // Bot code logs only once the engine runs, after the app's logger exists.
  let reportBotLogProblem: (problem: BotLogProblem) => void = () => {};
  let reportSearchFallback: (fallback: SearchFallback) => void = () => {};
  try {
    bus = await openBus(
      {
        redisUrl: config.redisUrl,
        postgresUrl: config.store.kind === 'postgres' ? config.store.url : undefined,
        secret: config.busSecret,
      },
      store,
      {
        onError: (err) => reportBusError(err),
        onRejected: (reason) => {
          metrics.busRejections.inc({ reason });
          warnOfRejection(reason);
        },
      },
    );
    const domain = createDomain(store, bus, {
      checkPackage: checkCompiledPackage,
      packageBuilder: draftBuilder,
      ...(config.chatEncryptionKey && { chatSecret: config.chatEncryptionKey }),
      files: { dataDir: config.dataDir, ...config.files },
      webhookPrivateTargets: config.webhookPrivateTargets,
      workspaceBacklog: config.engineWorkspaceBacklog,
      ...(config.admission && {
        admission: {
          ...config.admission,
          engineConcurrency: config.engineConcurrency,
          onDecision: (decision) => metrics.countAdmission(decision),
        },
      }),
      llm: config.llm,
      searchRanking: config.searchRanking,
      llmTargets: {
        // The operator's provider is reached as it is; a workspace's only where tenants' targets may go.
        connections: publicConnections(
          config.llmPrivateTargets ? () => undefined : publicOnly('PARLEY_LLM_PRIVATE_TARGETS is off'),
        ),
        allowPrivate: config.llmPrivateTargets,
      },
      onBotLogProblem: (problem) => reportBotLogProblem(problem),
      onSearchFallback: (fallback) => reportSearchFallback(fallback),
    });
    const firstStart = await bootstrap(store.db, domain.accounts, config.adminToken);
    // Rate limits count across processes in Redis when there is one; a Redis that does not answer lets
    // requests through rather than failing them (the limiter's skipOnError).
    limiterRedis =
      config.rateLimits && config.redisUrl
        ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
        : undefined;
    limiterRedis?.on('error', (err: Error) => reportBusError(err));
    metrics.sources.queue = () => domain.queue.stats();
    if (domain.admission) {
      const { admission } = domain;
      metrics.sources.admission = () => admission.state();
    }
    const budget = connectionBudget(config);
    const app = await buildApp({
      domain,
      metrics,
      logLevel: config.logLevel,
      chatPingIntervalMs: config.chatPingIntervalMs,
      version: VERSION,
      corsOrigins: config.corsOrigins,
      rateLimits: config.rateLimits && { ...config.rateLimits, redis: limiterRedis },
      connections: { ...config.connections, maxConnections: budget.maxConnections },
      trustProxy: proxyTrust(config.trustProxy),
      devTunnel: config.devBots.tunnel,
    });
    logConnectionLimits(app, config, budget);
    reportBusError = (err) =>
      app.log.error({ reason: err instanceof Error ? err.message : String(err) }, 'live signal bus error');
    // Once a minute at most: what floods the bus must not flood the log too; the metric counts them all.
    let lastRejectionWarning = -Infinity;
    warnOfRejection = (reason) => {
      if (Date.now() - lastRejectionWarning < REJECTION_WARNING_INTERVAL_MS) return;
      lastRejectionWarning = Date.now();
      app.log.warn(
        { reason },
        'a live bus message was dropped unread: not signed with this deployment’s secret, or replayed, or from a host whose clock is off (parley_bus_messages_rejected_total counts them)',
      );
    };
    reportStoreError = (err) =>
      app.log.error({ reason: err.message }, 'a database connection failed; the pool replaces it');
    for (const notice of store.notices) app.log.warn(notice);
    reportSearchFallback = ({ botId, error }) =>
      app.log.warn(
        { botId, err: error },
        'a search answered by words alone: its query could not be embedded',
      );
    reportBotLogProblem = (problem) => {
      if (problem.kind === 'lost')
        app.log.warn(
          { botId: problem.botId, lines: problem.lines, reason: problem.reason },
          'bot log lines were lost',
        );
      else
        app.log.warn(
          { err: problem.error, lines: problem.lines, retryMs: problem.retryMs },
          'bot log lines wait for the store',
        );
    };
    await app.listen({ port: config.port, host: config.host });
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${listeningPort(app)}`;
    domain.links.baseUrl = config.publicUrl ?? url;
    if (config.contentUrl !== undefined && new URL(domain.links.baseUrl).origin === config.contentUrl) {
      await app.close();
      throw new ConfigError('PARLEY_CONTENT_URL must be another origin than the server’s own');
    }
    domain.links.contentUrl = config.contentUrl;
    const sweeper = new StoreSweeper(domain, app.log, config.retention);
    sweeper.start();
    const engine = new Engine(domain, app.log, {
      sandboxProcesses: config.sandboxProcesses,
      sandboxMaxMemoryMb: config.sandboxMaxMemoryMb,
      concurrency: config.engineConcurrency,
      workspaceConcurrency: config.engineWorkspaceConcurrency,
      waitingTurns: config.engineWaitingTurns,
      metrics,
      botFetch: config.botFetch,
      devBotPrivateTargets: config.devBots.privateTargets,
      sdkBots: {
        ...config.sdkBots,
        bundlesDir: path.join(config.dataDir, 'sdk-bots'),
        serveApi: (socket, sandbox) => app.serveSandboxConnection(socket, sandbox),
        egress: {
          internet: config.sdkBots.internet,
          allowed: config.sdkBots.privateTargets,
          ownOrigins: ownOrigins(config, listeningPort(app)),
        },
      },
    });
    await engine.start();
    const indexer = new FileIndexer(domain, app.log);
    await indexer.start();
    const tableJobs = new TableJobRunner(domain, app.log);
    await tableJobs.start();
    const webhookSender = new WebhookSender(domain, app.log, {
      allowPrivateTargets: config.webhookPrivateTargets,
    });
    await webhookSender.start();
    let closing: Promise<void> | undefined;
    const liveBus = bus;
    return {
      app,
      store,
      sweeper,
      domain,
      bus: liveBus,
      url,
      firstStart,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await engine.stop();
          await indexer.stop();
          await tableJobs.stop();
          await webhookSender.stop();
          await domain.closeFiles();
          await sweeper.stop();
          await domain.botLogs.close();
          await domain.llmUsage.settled();
          await liveBus.close();
          limiterRedis?.disconnect();
          await store.close();
        })()),
    };
  } catch (err) {
    limiterRedis?.disconnect();
    await bus?.close();
    await store.close();
    throw err;
  }
}

/** What bounds the connections, said once at start: an operator sees what the descriptors allow. */
function logConnectionLimits(app: FastifyInstance, config: Config, budget: ConnectionBudget): void {
  const { connections, trustProxy } = config;
  const limits = {
    descriptors: budget.known ? budget.descriptors : `unknown (assumed ${budget.descriptors})`,
    reservedDescriptors: budget.reserved,
    maxConnections: budget.maxConnections,
    maxConnectionsPerAddress: connections.maxConnectionsPerAddress,
    headersTimeoutSeconds: connections.headersTimeoutMs / 1000,
    bodyTimeoutSeconds: connections.bodyTimeoutMs / 1000,
    bodyMinBytesPerSecond: connections.bodyMinBytesPerSecond,
    idleTimeoutSeconds: connections.idleTimeoutMs / 1000,
    trustProxy:
      trustProxy.kind === 'none'
        ? 'off'
        : trustProxy.kind === 'hops'
          ? `${trustProxy.hops} hops`
          : trustProxy.subnets.map((s) => `${s.network}/${s.prefix}`).join(', '),
  };
  app.log.info(limits, 'connection limits');
  if (budget.lowered) {
    app.log.warn(
      { configured: budget.lowered.configured, maxConnections: budget.maxConnections },
      `${SETTINGS.maxConnections.env} is more than the descriptors allow once the store, the bot processes and the server have theirs (raise ulimit -n): lowered`,
    );
  }
}

/**
 * `host:port` of this server, as the URLs it hands out name it (its public URL, its content URL, its
 * listening address):
 * a sandboxed bot may always reach them, as it reaches its API (to download a file by its URL, say).
 */
function ownOrigins(config: Config, port: number): string[] {
  const anyInterface = config.host === '0.0.0.0' || config.host === '::' || config.host === '';
  const hosts = anyInterface ? ['127.0.0.1', 'localhost', '::1'] : [config.host];
  const origins = hosts.map((host) => `${host.toLowerCase()}:${port}`);
  for (const origin of [config.publicUrl, config.contentUrl]) {
    if (!origin) continue;
    const url = new URL(origin);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    origins.push(`${host}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`);
  }
  return origins;
}

function listeningPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (typeof address === 'object' && address) return address.port;
  throw new Error('the server is not listening on a TCP port');
}
