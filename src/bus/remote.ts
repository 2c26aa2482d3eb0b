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
 */
export abstract class RemoteBus implements LiveBus {
  private readonly local = new MemoryBus();
  private readonly origin = randomUUID();

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
    // What is measured is what is sent: the frame escaped inside the wire text, in bytes.
    const carried = JSON.stringify({ ...reference, frame: signal.frame });
    this.send(Buffer.byteLength(carried) <= this.maxWireBytes ? carried : JSON.stringify(reference));
  }

  subscribe(conversationId: string, handler: (signal: RecordedSignal) => void): () => void {
    return this.local.subscribe(conversationId, handler);
  }

  /** Called by the transport with each text it receives. */
  protected async receive(text: string): Promise<void> {
    try {
      const wire = JSON.parse(text) as WireSignal;
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
