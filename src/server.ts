import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.ts';
import type { Config } from './config.ts';
import { bootstrap } from './domain/bootstrap.ts';
import type { BootstrapResult } from './domain/bootstrap.ts';
import { createDomain } from './domain/index.ts';
import type { Domain } from './domain/index.ts';
import { openBus } from './bus/index.ts';
import type { LiveBus } from './domain/live.ts';
import { Engine } from './engine/index.ts';
import { Scheduler } from './engine/scheduler.ts';
import { openStore } from './store/index.ts';
import { VERSION } from './version.ts';

export interface RunningServer {
  app: FastifyInstance;
  domain: Domain;
  bus: LiveBus;
  /** The origin it listens on, e.g. `http://127.0.0.1:3000`. */
  url: string;
  firstStart: BootstrapResult;
  /** Stops accepting, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const store = await openStore(config.store);
  let bus: LiveBus | undefined;
  // Bus errors come before the app's logger exists only if the bus fails at once; then they are thrown.
  let reportBusError: (err: unknown) => void = () => {};
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
    });
    const firstStart = await bootstrap(store.db, domain.accounts, config.adminToken);
    const app = await buildApp({
      domain,
      logLevel: config.logLevel,
      chatPingIntervalMs: config.chatPingIntervalMs,
      version: VERSION,
    });
    reportBusError = (err) => app.log.error({ err }, 'live signal bus error');
    await app.listen({ port: config.port, host: config.host });
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${listeningPort(app)}`;
    domain.links.baseUrl = config.publicUrl ?? url;
    const scheduler = new Scheduler(domain, app.log);
    scheduler.start();
    const engine = new Engine(domain, app.log, {
      sandboxProcesses: config.sandboxProcesses,
      concurrency: 16,
    });
    await engine.start();
    let closing: Promise<void> | undefined;
    const liveBus = bus;
    return {
      app,
      domain,
      bus: liveBus,
      url,
      firstStart,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await engine.stop();
          await scheduler.stop();
          await liveBus.close();
          await store.close();
        })()),
    };
  } catch (err) {
    await bus?.close();
    await store.close();
    throw err;
  }
}

function listeningPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (typeof address === 'object' && address) return address.port;
  throw new Error('the server is not listening on a TCP port');
}
