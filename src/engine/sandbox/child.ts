/**
 * Entry of a sandbox process, started by supervisor.ts with `child_process.fork`. It holds the
 * isolates of the bot versions routed to it (one VersionRuntime each) and talks to the API process
 * only over IPC (protocol.ts). If V8 aborts this process (an isolate that V8 cannot contain), the
 * parent fails the calls it held and starts a new one; nothing else goes down with it.
 */
import { MEMORY_CHECK_INTERVAL_MS } from './limits.ts';
import { Outbox, readBatch, readParentMessage } from './protocol.ts';
import type { ChildMessage, ParentMessage, ProgramSource } from './protocol.ts';
import { VersionRuntime } from './version-runtime.ts';

const runtimes = new Map<string, VersionRuntime>();
/** The runtime of each call in flight, to route the parent's host answers. */
const callRuntimes = new Map<number, VersionRuntime>();

// A closed channel means the parent is gone; 'disconnect' below ends this process.
const outbox = new Outbox<ChildMessage>((batch) =>
  process.send?.(batch, undefined, undefined, () => undefined),
);

function send(message: ChildMessage): void {
  outbox.post(message);
}

function load(program: ProgramSource): void {
  const existing = runtimes.get(program.versionId);
  // A version id names compiled code, so only a changed memory limit needs a new isolate.
  if (existing && existing.program.memoryMb === program.memoryMb) return;
  existing?.retire();
  runtimes.set(
    program.versionId,
    new VersionRuntime(program, (id, requestId, call) => send({ type: 'host', id, requestId, call })),
  );
}

function onCall(message: Extract<ParentMessage, { type: 'call' }>): void {
  const { id, versionId, unit, context, timeoutMs } = message;
  if (message.program) load(message.program);
  const runtime = runtimes.get(versionId);
  if (!runtime) {
    const message = `version ${versionId} is not loaded`;
    send({ type: 'result', id, outcome: { ok: false, kind: 'runtime', message, logs: [] } });
    return;
  }
  callRuntimes.set(id, runtime);
  void runtime.call(id, unit, context, timeoutMs).then((outcome) => {
    callRuntimes.delete(id);
    send(
      outcome.ok
        ? { type: 'returned', id, text: outcome.text, logs: outcome.logs }
        : { type: 'result', id, outcome },
    );
  });
}

process.on('message', (raw: unknown) => {
  const { messages, malformed } = readBatch(raw, readParentMessage);
  if (malformed > 0) process.stderr.write('sandbox: ignored a malformed message from the parent\n');
  for (const message of messages) onParentMessage(message);
});

function onParentMessage(message: ParentMessage): void {
  switch (message.type) {
    case 'call':
      onCall(message);
      break;
    case 'hostAnswer':
      callRuntimes.get(message.id)?.answer(message.id, message.requestId, message.answer);
      break;
    case 'unload':
      runtimes.get(message.versionId)?.retire();
      runtimes.delete(message.versionId);
      break;
  }
}

// The parent closed the channel (close(), or it died): nothing is left to serve.
process.on('disconnect', () => process.exit(0));

if (!process.send) {
  process.stderr.write('sandbox: child.ts must be started with child_process.fork\n');
  process.exit(1);
}

// Each isolate's heap has its limit, but WebAssembly memory, array buffers and isolates growing together
// are outside any one of them: the process as a whole is bounded too. Isolates run on their own threads,
// so this timer runs while bot code does. Ending the process fails the calls it held; the parent
// restarts it.
const maxRssBytes = Number(process.argv[2]) * 1024 * 1024;
if (maxRssBytes > 0) {
  let stopping = false;
  setInterval(() => {
    if (stopping || process.memoryUsage.rss() <= maxRssBytes) return;
    stopping = true;
    process.stderr.write(`sandbox: over ${process.argv[2]} MB of memory; stopping\n`);
    // The parent learns why before the process ends. It ends by SIGKILL, not process.exit: an exit runs
    // V8's teardown while isolates may be running on their threads, which was seen to crash (SIGSEGV)
    // and would leave the parent with a signal instead of the reason.
    const end = () => process.kill(process.pid, 'SIGKILL');
    setTimeout(end, 500).unref();
    process.send?.([{ type: 'overMemory' }] satisfies ChildMessage[], undefined, undefined, end);
  }, MEMORY_CHECK_INTERVAL_MS).unref();
}

send({ type: 'ready' });
