import type { ConversationLog, RecordedSignal } from './conversation-log.ts';

/** Signals a listener asked for that the log no longer holds (older than its retention): numbers `from` to `to`. */
export interface MissedSignals {
  from: number;
  to: number;
}

export interface FollowOptions {
  /** The number of the last signal the listener has: it receives every later one. Undefined: from now. */
  after?: number;
  /** Each signal, once, in number order. */
  deliver(signal: RecordedSignal): void;
  /**
   * Signals that cannot be delivered because the log has let them go: the listener is told, in their
   * place, so that it can read the conversation again. Never a silent gap.
   */
  missed(missed: MissedSignals): void;
  /** The store failed while filling a gap: the follower has stopped. */
  failed(err: unknown): void;
}

/** A listener of one conversation, until `close`. */
export interface Following {
  close(): void;
}

/**
 * Follows one conversation's signals: every signal after the listener's point, each once, in number
 * order. Signals arrive from the bus as they are published; one that arrives ahead of a number not
 * seen yet waits while the ones in between are read from the log, page by page (a reconnecting
 * listener's backlog, a missed publication, or signals published out of commit order by different
 * processes).
 */
export async function follow(
  log: ConversationLog,
  conversationId: string,
  options: FollowOptions,
): Promise<Following> {
  const pending: RecordedSignal[] = [];
  let draining = false;
  let ready = false;
  let closed = false;
  let delivered = 0;
  /** The number the listener must have been given, from the log if need be, before what is pending. */
  let caughtUpTo = 0;

  const deliver = (signal: RecordedSignal) => {
    delivered = signal.seq;
    options.deliver(signal);
  };

  /** Delivers every signal after `delivered` up to `to` from the log, saying which ones it no longer has. */
  const catchUp = async (to: number) => {
    while (delivered < to && !closed) {
      const page = await log.since(conversationId, delivered, to);
      if (closed) return;
      const first = page[0]?.seq ?? to + 1;
      if (first > delivered + 1) {
        const gap = { from: delivered + 1, to: first - 1 };
        delivered = gap.to;
        options.missed(gap);
      }
      for (const signal of page) if (!closed && signal.seq > delivered) deliver(signal);
    }
  };

  const drain = async () => {
    if (draining || !ready) return;
    draining = true;
    try {
      await catchUp(caughtUpTo);
      while (pending.length > 0 && !closed) {
        pending.sort((a, b) => a.seq - b.seq);
        const next = pending.shift();
        if (!next || next.seq <= delivered) continue;
        await catchUp(next.seq - 1);
        if (!closed) deliver(next);
      }
    } catch (err) {
      closed = true;
      unsubscribe();
      options.failed(err);
    } finally {
      draining = false;
    }
  };

  // Subscribe before reading where the log stands, so that nothing published in between is lost.
  const unsubscribe = log.bus.subscribe(conversationId, (signal) => {
    pending.push(signal);
    void drain();
  });
  try {
    const last = await log.lastSeq(conversationId);
    // A number from the future (another conversation's, or made up) follows from now.
    delivered = options.after === undefined ? last : Math.min(options.after, last);
    caughtUpTo = last;
  } catch (err) {
    unsubscribe();
    throw err;
  }
  ready = true;
  void drain();
  return {
    close: () => {
      if (closed) return;
      closed = true;
      unsubscribe();
    },
  };
}
