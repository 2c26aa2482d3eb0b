/**
 * Entry of an SDK bundle's process, inside its sandbox (bundled into one CommonJS file by
 * runner-build.ts; Node's permission model lets the process read only that file, the bundle and the
 * fetch proxy setup). It sets up the sandbox's network, loads the bundle built by `bp build`, and runs
 * each request the server sends over the IPC channel through the bundle's handler, as the hosted platform
 * calls a deployed bot.
 */
import { createRequire } from 'node:module';
import { BUNDLE_FILE, EGRESS_ENV, LOAD_FAILED_EXIT_CODE } from './layout.ts';
import { openSandboxNetwork } from './sandbox-network.ts';

interface BundleResponse {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

type Handler = (request: unknown) => unknown;

function send(message: unknown): void {
  if (process.connected) process.send?.(message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function handlerOf(bundle: unknown): Handler | undefined {
  if (typeof bundle !== 'object' || bundle === null) return undefined;
  const direct: unknown = Reflect.get(bundle, 'handler');
  if (typeof direct === 'function') return (request): unknown => Reflect.apply(direct, bundle, [request]);
  const fallback: unknown = Reflect.get(bundle, 'default');
  return fallback === bundle ? undefined : handlerOf(fallback);
}

/** What the handler answered, in the shape the server reads (it checks it again: nothing here is trusted). */
function responseOf(answer: unknown): BundleResponse {
  const field = (name: string): unknown =>
    typeof answer === 'object' && answer !== null ? Reflect.get(answer, name) : undefined;
  const status = field('status');
  const headers = field('headers');
  const body = field('body');
  return {
    status: typeof status === 'number' ? status : 200,
    headers: typeof headers === 'object' && headers !== null ? { ...headers } : {},
    body: typeof body === 'string' ? body : '',
  };
}

async function main(): Promise<void> {
  const egress = process.env[EGRESS_ENV] === 'on';
  delete process.env[EGRESS_ENV];
  process.env.BP_API_URL = await openSandboxNetwork(egress);

  let handler: Handler | undefined;
  try {
    const bundle: unknown = createRequire(BUNDLE_FILE)(BUNDLE_FILE);
    handler = handlerOf(bundle);
    if (!handler) throw new Error('the bundle exports no handler (is it built by `bp build`?)');
  } catch (error) {
    process.stderr.write(`the bundle failed to load: ${describe(error)}\n`);
    process.exit(LOAD_FAILED_EXIT_CODE);
  }
  const handle = handler;
  process.on('message', (message: unknown) => {
    const field = (name: string): unknown =>
      typeof message === 'object' && message !== null ? Reflect.get(message, name) : undefined;
    const id = field('id');
    const request = field('request');
    Promise.resolve()
      .then(() => handle(request))
      .then(
        (answer: unknown) => send({ id, response: responseOf(answer) }),
        // What the SDK's own server answers for a handler that throws: a 500 with the message.
        (error: unknown) =>
          send({
            id,
            response: { status: 500, headers: {}, body: JSON.stringify({ error: describe(error) }) },
          }),
      );
  });
  // The server's end of the channel closing means the server is gone: so is this bot.
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}

void main();
