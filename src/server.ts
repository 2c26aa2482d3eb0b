import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from './api/app.ts';
import type { Config } from './config.ts';
import { bootstrap } from './domain/workspace/bootstrap.ts';
import type { BootstrapResult } from './domain/workspace/bootstrap.ts';
import { createDomain } from './domain/index.ts';
import type { Domain } from './domain/index.ts';
import { openBus } from './bus/index.ts';
import type { LiveBus } from './domain/live/conversation-log.ts';
import type { BotLogProblem } from './domain/bots/bot-log-buffer.ts';
import { Engine } from './engine/index.ts';
import { StoreSweeper } from './engine/store-sweeper.ts';
import { FileIndexer } from './engine/file-indexer.ts';
import { WebhookSender } from './engine/webhook-sender.ts';
import { TableJobRunner } from './engine/table-jobs.ts';
import { openStore } from './store/index.ts';
import type { Store } from './store/index.ts';
import { Metrics } from './metrics.ts';
import { VERSION } from './version.ts';

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
  // Bot code logs only once the engine runs, after the app's logger exists.
  let reportBotLogProblem: (problem: BotLogProblem) => void = () => {};
  try {
    bus = await openBus(
      {
        redisUrl: config.redisUrl,
        postgresUrl: config.store.kind === 'postgres' ? config.store.url : undefined,
      },
      store,
      (err) => reportBusError(err),
    );
    const domain = createDomain(store, bus, {
      ...(config.chatEncryptionKey && { chatSecret: config.chatEncryptionKey }),
      files: { dataDir: config.dataDir, ...config.files },
      webhookPrivateTargets: config.webhookPrivateTargets,
      onBotLogProblem: (problem) => reportBotLogProblem(problem),
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
    const app = await buildApp({
      domain,
      metrics,
      logLevel: config.logLevel,
      chatPingIntervalMs: config.chatPingIntervalMs,
      version: VERSION,
      corsOrigins: config.corsOrigins,
      rateLimits: config.rateLimits && { ...config.rateLimits, redis: limiterRedis },
    });
    reportBusError = (err) =>
      app.log.error({ reason: err instanceof Error ? err.message : String(err) }, 'live signal bus error');
    reportStoreError = (err) =>
      app.log.error({ reason: err.message }, 'a database connection failed; the pool replaces it');
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
    const sweeper = new StoreSweeper(domain, app.log, config.retention);
    sweeper.start();
    const engine = new Engine(domain, app.log, {
      sandboxProcesses: config.sandboxProcesses,
      sandboxMaxMemoryMb: config.sandboxMaxMemoryMb,
      concurrency: config.engineConcurrency,
      metrics,
      sdkBots: {
        ...config.sdkBots,
        bundlesDir: path.join(config.dataDir, 'sdk-bots'),
        apiUrl: loopbackUrl(config.host, listeningPort(app)),
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

/** Where processes of this machine reach this server (SDK bots call back over loopback). */
function loopbackUrl(host: string, port: number): string {
  const anyInterface = host === '0.0.0.0' || host === '::' || host === '';
  const address = anyInterface ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${address}:${port}`;
}

function listeningPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (typeof address === 'object' && address) return address.port;
  throw new Error('the server is not listening on a TCP port');
}
