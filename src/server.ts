import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.ts';
import type { Config } from './config.ts';
import { bootstrap } from './domain/bootstrap.ts';
import type { BootstrapResult } from './domain/bootstrap.ts';
import { createDomain } from './domain/index.ts';
import type { Domain } from './domain/index.ts';
import { MemoryBus } from './bus/memory.ts';
import { Scheduler } from './engine/scheduler.ts';
import { openStore } from './store/index.ts';
import { VERSION } from './version.ts';

export interface RunningServer {
  app: FastifyInstance;
  domain: Domain;
  bus: MemoryBus;
  /** The origin it listens on, e.g. `http://127.0.0.1:3000`. */
  url: string;
  firstStart: BootstrapResult;
  /** Stops accepting, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const store = await openStore(config.store);
  try {
    const bus = new MemoryBus();
    const domain = createDomain(store, bus);
    const firstStart = await bootstrap(store.db, domain.accounts, config.adminToken);
    const app = await buildApp({
      domain,
      logLevel: config.logLevel,
      version: VERSION,
    });
    await app.listen({ port: config.port, host: config.host });
    const scheduler = new Scheduler(domain, app.log);
    scheduler.start();
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    let closing: Promise<void> | undefined;
    return {
      app,
      domain,
      bus,
      url: `http://${host}:${port}`,
      firstStart,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await scheduler.stop();
          await store.close();
        })()),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
