import { randomUUID } from 'node:crypto';
import type { LiveBus, RecordedSignal } from '../domain/live/conversation-log.ts';
import { MemoryBus } from './memory.ts';

/** A signal as it travels between processes: who sent it, and its frame unless too large to carry. */
export interface WireSignal {
  origin: string;
  conversationId: string;
  seq: number;
  frame?: string;
  removedUserId?: string;
}

/** Reads a recorded signal back from the store, for signals whose frame did not travel. */
export type FrameLoader = (conversationId: string, seq: number) => Promise<RecordedSignal | undefined>;

/**
 * A bus across processes: local subscribers are served in-process at once, and every signal is also
 * sent to the other processes, which serve their own subscribers. A transport sends and receives text.
 *
 * The signals published during one turn of the event loop travel together, as one JSON array of as many
 * as fit in a transport message: on Postgres each message is a NOTIFY, a transaction of its own, which
 * under load cost more than the changes it reported.
 */
export abstract class RemoteBus implements LiveBus {
  private readonly local = new MemoryBus();
  private readonly origin = randomUUID();
  /** Wire texts of the signals published since the last send. */
  private outgoing: string[] = [];

  constructor(
    private readonly loadFrame: FrameLoader,
    /**
     * The most bytes the transport carries in one message: a signal whose wire text would be longer
     * travels as a reference, and receivers read its frame from the store.
     */
    private readonly maxWireBytes: number,
    protected readonly onError: (err: unknown) => void,
  ) {}

  protected abstract send(text: string): void;

  publish(signal: RecordedSignal): void {
    this.local.publish(signal);
    const reference: WireSignal = {
      origin: this.origin,
      conversationId: signal.conversationId,
      seq: signal.seq,
      ...(signal.removedUserId !== undefined && { removedUserId: signal.removedUserId }),
    };
    // What is measured is what is sent: the frame escaped inside the wire text, in bytes (with the
    // brackets of the batch around it).
    const carried = JSON.stringify({ ...reference, frame: signal.frame });
    const text = Buffer.byteLength(carried) + 2 <= this.maxWireBytes ? carried : JSON.stringify(reference);
    if (this.outgoing.length === 0) setImmediate(() => this.flush());
    this.outgoing.push(text);
  }

  /** Sends what was published, in as few transport messages as fit. */
  private flush(): void {
    const texts = this.outgoing;
    this.outgoing = [];
    let batch: string[] = [];
    let bytes = 2; // the brackets
    for (const text of texts) {
      const size = Buffer.byteLength(text);
      // Each text fits alone (see publish); a comma goes before all but the first.
      if (batch.length > 0 && bytes + 1 + size > this.maxWireBytes) {
        this.send(`[${batch.join(',')}]`);
        batch = [];
        bytes = 2;
      }
      bytes += size + (batch.length > 0 ? 1 : 0);
      batch.push(text);
    }
    if (batch.length > 0) this.send(`[${batch.join(',')}]`);
  }

  subscribe(conversationId: string, handler: (signal: RecordedSignal) => void): () => void {
    return this.local.subscribe(conversationId, handler);
  }

  /** Called by the transport with each text it receives: a batch of signals (or one, as sent before batches). */
  protected async receive(text: string): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      this.onError(err);
      return;
    }
    for (const wire of Array.isArray(parsed) ? parsed : [parsed]) await this.receiveOne(wire as WireSignal);
  }

  private async receiveOne(wire: WireSignal): Promise<void> {
    try {
      if (wire.origin === this.origin || !this.local.hasSubscribers(wire.conversationId)) return;
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
