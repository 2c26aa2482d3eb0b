import { EventEmitter } from 'node:events';
import type { ConversationSignal, SignalSink } from '../domain/signals.ts';

export type SignalHandler = (signal: ConversationSignal) => void;

/** Live signals within one process: every listener of a conversation gets its signals in publish order. */
export class MemoryBus implements SignalSink {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open stream: thousands per conversation are normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish(signal: ConversationSignal): void {
    this.emitter.emit(signal.conversationId, signal);
  }

  subscribe(conversationId: string, handler: SignalHandler): () => void {
    this.emitter.on(conversationId, handler);
    return () => this.emitter.off(conversationId, handler);
  }
}
