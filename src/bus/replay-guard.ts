/**
 * How far a message's time of sending may be from this clock: the clocks of a deployment's hosts
 * (kept by NTP, within a second) and a receiver busy for a while both fit well within it. A signal
 * dropped as stale is not lost: listeners read it from the log at the next signal's gap.
 */
export const MAX_MESSAGE_AGE_MS = 60_000;

/**
 * How many of a sender's latest message numbers are remembered: a message may overtake a few others
 * (Postgres sends from a pool of connections), never a thousand.
 */
const WINDOW = 1024;

interface Sender {
  /** The highest message number received from it. */
  highest: number;
  /** The numbers received above `highest - WINDOW` (and some below, until the next pruning). */
  seen: Set<number>;
  heardAt: number;
}

/**
 * Drops a signed message that was sent too long ago, or that was received before: each sender (a
 * process, named for its life) numbers its messages, and each number is accepted once. A receiver
 * that restarts forgets what it saw, so a message of the last minute could be replayed to it once:
 * it carries signals already delivered, which listeners skip (they deliver each number once).
 */
export class ReplayGuard {
  private readonly senders = new Map<string, Sender>();
  private nextSweepAt = 0;

  check(origin: string, number: number, sentAt: number, now: number): 'fresh' | 'stale' | 'replayed' {
    if (Math.abs(now - sentAt) > MAX_MESSAGE_AGE_MS) return 'stale';
    this.forgetSilentSenders(now);
    let sender = this.senders.get(origin);
    if (!sender) {
      sender = { highest: -1, seen: new Set(), heardAt: now };
      this.senders.set(origin, sender);
    }
    if (number <= sender.highest - WINDOW || sender.seen.has(number)) return 'replayed';
    sender.seen.add(number);
    sender.heardAt = now;
    if (number > sender.highest) {
      sender.highest = number;
      if (sender.seen.size > 2 * WINDOW) {
        for (const n of sender.seen) if (n <= number - WINDOW) sender.seen.delete(n);
      }
    }
    return 'fresh';
  }

  /**
   * Forgets the senders heard from last more than twice the age limit ago (processes that stopped):
   * any message they sent is stale by now, so it is refused without them.
   */
  private forgetSilentSenders(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + MAX_MESSAGE_AGE_MS;
    for (const [origin, sender] of this.senders) {
      if (now - sender.heardAt > 2 * MAX_MESSAGE_AGE_MS) this.senders.delete(origin);
    }
  }
}
