// `node --import tsx bench/bus-signing.ts`: what signing and checking cost per message of the live bus
// (src/bus/signing.ts, replay-guard.ts, remote.ts), on this machine's CPU, without a transport. A message
// here carries one chat message's signal (the usual case: a turn of the event loop rarely publishes more).
// Prints, per message, in microseconds of CPU: the sender's HMAC, the receiver's whole check (length,
// HMAC, JSON parse, shape, time and number), and what a receiver spent before the bus was signed (the JSON
// parse alone), for three rounds.
import { randomBytes } from 'node:crypto';
import { RemoteBus } from '../src/bus/remote.ts';
import { BusSeal } from '../src/bus/signing.ts';

const MESSAGES = 20_000;

/** A bus whose transport keeps what it sends, and takes what it is handed as received. */
class Loopback extends RemoteBus {
  readonly outbox: string[] = [];
  protected send(text: string): void {
    this.outbox.push(text);
  }
  take(text: string): Promise<void> {
    return this.receive(text);
  }
}

const rejected: string[] = [];
const hooks = {
  onError: (err: unknown) => {
    throw err;
  },
  onRejected: (reason: string) => rejected.push(reason),
};
const seal = new BusSeal(randomBytes(32).toString('base64url'));
const load = () => Promise.resolve(undefined);
const frame = JSON.stringify({
  type: 'message_created',
  data: {
    id: 'msg_01JQ8Y8M2S5V6N7P8Q9R0S1T2U',
    createdAt: new Date().toISOString(),
    payload: { type: 'text', text: 'Hello! How can I help you today? Ask me about your order.' },
    userId: 'user_01JQ8Y8M2S5V6N7P8Q9R0S1T2V',
    conversationId: 'conv_01JQ8Y8M2S5V6N7P8Q9R0S1T2W',
    isBot: true,
  },
});

function cpuUs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / MESSAGES;
}

for (let round = 1; round <= 3; round++) {
  const sender = new Loopback(seal, load, 512 * 1024, hooks);
  const receiver = new Loopback(seal, load, 512 * 1024, hooks);
  // Each publish is flushed at the next turn of the loop: one signal, one message.
  for (let i = 0; i < MESSAGES; i++) {
    sender.publish({ conversationId: 'conv_internal_1', seq: i + 1, frame });
    await new Promise((r) => setImmediate(r));
  }
  const texts = sender.outbox;
  const bodies = texts.map((t) => t.slice(t.indexOf('.', 3) + 1));
  const signUs = cpuUs(() => {
    for (const body of bodies) seal.seal(body);
  });
  const checkUs = cpuUs(() => {
    // The check runs before the first await of `receive`: it is done when the call returns.
    for (const text of texts) void receiver.take(text);
  });
  const parseUs = cpuUs(() => {
    for (const body of bodies) JSON.parse(body);
  });
  if (rejected.length > 0) throw new Error(`the receiver dropped ${rejected.length} messages`);
  process.stdout.write(
    `round ${round}: ${Buffer.byteLength(texts[0]!)} bytes a message; sign ${signUs.toFixed(2)} µs, ` +
      `check on receipt ${checkUs.toFixed(2)} µs (of which the JSON parse, as before signing, ${parseUs.toFixed(2)} µs)\n`,
  );
  await sender.close();
  await receiver.close();
}
