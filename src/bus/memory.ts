import { EventEmitter } from 'node:events';
import type { LiveBus, RecordedSignal } from '../domain/live/conversation-log.ts';

/** Live signals within one process: every subscriber of a conversation gets them in publish order. */
export class MemoryBus implements LiveBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One subscriber per open stream: thousands per conversation are normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish(signal: RecordedSignal): void {
    this.emitter.emit(signal.conversationId, signal);
  }

  subscribe(conversationId: string, handler: (signal: RecordedSignal) => void): () => void {
    this.emitter.on(conversationId, handler);
    return () => this.emitter.off(conversationId, handler);
  }

  hasSubscribers(conversationId: string): boolean {
    return this.emitter.listenerCount(conversationId) > 0;
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
