import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import type { LiveBus, RecordedSignal } from '../domain/live/conversation-log.ts';
import { compiledOnFirstUse } from '../domain/shared/json-schema.ts';
import { MemoryBus } from './memory.ts';
import type { BusRejection } from './rejections.ts';
import { ReplayGuard } from './replay-guard.ts';
import type { BusSeal } from './signing.ts';

/** A signal as it travels between processes: its frame, unless too large to carry. */
const WireSignalSchema = Type.Object({
  conversationId: Type.String(),
  seq: Type.Integer({ minimum: 1 }),
  frame: Type.Optional(Type.String()),
  removedUserId: Type.Optional(Type.String()),
});
type WireSignal = Static<typeof WireSignalSchema>;

/** What one transport message carries, signed: who sent it, its number and time, and its signals. */
const BatchSchema = Type.Object({
  origin: Type.String(),
  number: Type.Integer({ minimum: 0 }),
  sentAt: Type.Number(),
  signals: Type.Array(WireSignalSchema),
});
const isBatch = compiledOnFirstUse<Static<typeof BatchSchema>>(BatchSchema);

/** A batch's body, written as text around the signals' wire texts (each already JSON). */
function batchBody(origin: string, number: number, sentAt: number, texts: string[]): string {
  return `{"origin":${JSON.stringify(origin)},"number":${number},"sentAt":${sentAt},"signals":[${texts.join(',')}]}`;
}

/** Reads a recorded signal back from the store, for signals whose frame did not travel. */
export type FrameLoader = (conversationId: string, seq: number) => Promise<RecordedSignal | undefined>;

export interface BusHooks {
  onError: (err: unknown) => void;
  /** A message received was dropped unread: it was not one this deployment's processes sent. */
  onRejected: (reason: BusRejection) => void;
}

/**
 * A bus across processes: local subscribers are served in-process at once, and every signal is also
 * sent to the other processes, which serve their own subscribers. A transport sends and receives text.
 *
 * The signals published during one turn of the event loop travel together, as one message of as many
 * as fit: on Postgres each message is a NOTIFY, a transaction of its own, which under load cost more
 * than the changes it reported. Each message is signed with the deployment's secret (`BusSeal`), and a
 * message received is read only once its signature, its time and its number hold: whoever else can
 * reach the transport can neither make a listener show what it sent, nor show it an old message again.
 */
export abstract class RemoteBus implements LiveBus {
  private readonly local = new MemoryBus();
  private readonly origin = randomUUID();
  private readonly replays = new ReplayGuard();
  /** Wire texts of the signals published since the last send. */
  private outgoing: string[] = [];
  /** The number of this process's next message. */
  private nextNumber = 0;
  /** The bytes of a message around its signals: the signature, the sender, its number and time. */
  private readonly envelopeBytes: number;

  constructor(
    private readonly seal: BusSeal,
    private readonly loadFrame: FrameLoader,
    /**
     * The most bytes the transport carries in one message: a signal whose wire text would be longer
     * travels as a reference, and receivers read its frame from the store.
     */
    private readonly maxWireBytes: number,
    protected readonly hooks: BusHooks,
  ) {
    this.envelopeBytes = Buffer.byteLength(
      seal.seal(batchBody(this.origin, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, [])),
    );
  }

  protected abstract send(text: string): void;

  protected readonly onError = (err: unknown): void => this.hooks.onError(err);

  publish(signal: RecordedSignal): void {
    this.local.publish(signal);
    const reference: WireSignal = {
      conversationId: signal.conversationId,
      seq: signal.seq,
      ...(signal.removedUserId !== undefined && { removedUserId: signal.removedUserId }),
    };
    // What is measured is what is sent: the frame escaped inside the wire text, in bytes (with the
    // envelope around it).
    const carried = JSON.stringify({ ...reference, frame: signal.frame });
    const fits = Buffer.byteLength(carried) + this.envelopeBytes <= this.maxWireBytes;
    if (this.outgoing.length === 0) setImmediate(() => this.flush());
    this.outgoing.push(fits ? carried : JSON.stringify(reference));
  }

  /** Sends what was published, in as few transport messages as fit. */
  private flush(): void {
    const texts = this.outgoing;
    this.outgoing = [];
    let batch: string[] = [];
    let bytes = this.envelopeBytes;
    for (const text of texts) {
      const size = Buffer.byteLength(text);
      // Each text fits alone (see publish); a comma goes before all but the first.
      if (batch.length > 0 && bytes + 1 + size > this.maxWireBytes) {
        this.send(this.sealed(batch));
        batch = [];
        bytes = this.envelopeBytes;
      }
      bytes += size + (batch.length > 0 ? 1 : 0);
      batch.push(text);
    }
    if (batch.length > 0) this.send(this.sealed(batch));
  }

  private sealed(texts: string[]): string {
    return this.seal.seal(batchBody(this.origin, this.nextNumber++, Date.now(), texts));
  }

  subscribe(conversationId: string, handler: (signal: RecordedSignal) => void): () => void {
    return this.local.subscribe(conversationId, handler);
  }

  /** Called by the transport with each text it receives: a signed batch of signals, or something to drop. */
  protected async receive(text: string): Promise<void> {
    const signals = this.open(text);
    for (const wire of signals) await this.receiveOne(wire);
  }

  /** The signals of a message another process of this deployment sent, once; none of any other. */
  private open(text: string): WireSignal[] {
    // Checked before the signature is computed: no message this bus sends is longer.
    if (text.length > this.maxWireBytes) return this.reject('malformed');
    const opened = this.seal.open(text);
    if ('rejected' in opened) return this.reject(opened.rejected);
    let batch: unknown;
    try {
      batch = JSON.parse(opened.body);
    } catch {
      return this.reject('malformed');
    }
    if (!isBatch(batch)) return this.reject('malformed');
    // This process's own messages come back too (Redis and Postgres send to every listener): each is
    // checked like any other, so that one sent again is counted, and then left to the local delivery.
    const freshness = this.replays.check(batch.origin, batch.number, batch.sentAt, Date.now());
    if (freshness !== 'fresh') return this.reject(freshness);
    return batch.origin === this.origin ? [] : batch.signals;
  }

  private reject(reason: BusRejection): [] {
    this.hooks.onRejected(reason);
    return [];
  }

  private async receiveOne(wire: WireSignal): Promise<void> {
    try {
      if (!this.local.hasSubscribers(wire.conversationId)) return;
      const signal =
        wire.frame !== undefined
          ? {
              conversationId: wire.conversationId,
              seq: wire.seq,
              frame: wire.frame,
              ...(wire.removedUserId !== undefined && { removedUserId: wire.removedUserId }),
            }
          : await this.loadFrame(wire.conversationId, wire.seq);
      if (signal) this.local.publish(signal);
    } catch (err) {
      this.onError(err);
    }
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}
