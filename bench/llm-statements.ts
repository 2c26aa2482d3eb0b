// The store statements one streamed completion runs in Parley (issue 31), by what the request asks for:
// each is a round trip, and those before the provider is asked delay the first token. The scenario's
// provider and Parley as `npm run bench` starts them, then `--streams` streams one after the other per
// request shape, read from parley_sql_statements_total around them, less what the server runs idle
// over as long (its queues' polling). Needs `npm run build:server`.
//   node --import tsx bench/llm-statements.ts [--store sqlite|postgres] [--streams 20]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { METRICS_PATH } from '../src/contract/metrics.ts';
import { generateTextStream } from '../src/contract/cognitive/index.ts';
import { APIS, mountOf } from './lib/api.ts';
import { startModelProvider } from './lib/provider-process.ts';
import { botApiKey, botHeadersOf, llmSettings, ownerAdmin, startParley } from './lib/parley.ts';
import type { StoreName } from './lib/parley.ts';
import { stopAll } from './lib/procs.ts';

const { values: options } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    streams: { type: 'string', default: '20' },
  },
});
const store: StoreName = options.store === 'postgres' ? 'postgres' : 'sqlite';
const streams = Number(options.streams);

type Shape = (n: number) => Record<string, unknown>;
const skipCache: Shape = () => ({ skipCache: true });
/** What a request asks of the gateway's caches, as the official clients send it. */
const SHAPES: Record<string, Shape> = {
  'skipCache (the bench)': skipCache,
  'default (content cache)': () => ({}),
  'requestId, skipCache': (n) => ({ skipCache: true, requestId: `req-${n}` }),
  'requestId and content cache': (n) => ({ requestId: `both-${n}` }),
};

let server: Awaited<ReturnType<typeof startParley>> | undefined;
try {
  const provider = await startModelProvider();
  server = await startParley(store, [], llmSettings(provider));
  const { url } = server;
  const { bot } = await ownerAdmin(server).createBot({ name: 'llm-statements' });
  const headers = {
    ...botHeadersOf(bot.id, await botApiKey(server, bot.id)),
    'content-type': 'application/json',
  };
  const statements = async () => {
    const text = await (await fetch(`${url}${METRICS_PATH}`)).text();
    return Number(/^parley_sql_statements_total (\d+)/m.exec(text)?.[1] ?? NaN);
  };
  const streamOnce = async (n: number, shape: Shape) => {
    const response = await fetch(`${url}${mountOf(APIS.cognitive)}${generateTextStream.path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        model: 'best',
        messages: [{ role: 'user', content: `question ${n}` }],
        options: shape(n),
      }),
    });
    if (!response.ok) throw new Error(`stream ${n}: ${response.status} ${await response.text()}`);
    await response.text();
  };
  // Warm: the first call reads what the process keeps (token, routes, spend) once.
  await streamOnce(-1, skipCache);
  let n = 0;
  for (const [name, shape] of Object.entries(SHAPES)) {
    const before = await statements();
    const t0 = performance.now();
    for (let i = 0; i < streams; i++) await streamOnce(n++, shape);
    const elapsed = performance.now() - t0;
    const during = (await statements()) - before;
    const idleBefore = await statements();
    await sleep(elapsed);
    const idle = (await statements()) - idleBefore;
    process.stdout.write(
      `${store} ${name}: ${((during - idle) / streams).toFixed(2)} statements a stream (${during} over ${streams} streams, ${idle} idle over as long)\n`,
    );
  }
} finally {
  await server?.stop();
  await stopAll();
}
