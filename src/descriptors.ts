import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Config } from './config.ts';

/**
 * Descriptors the server keeps for itself whatever it serves: standard streams, the listening socket,
 * the event loop's own, the SQLite files of its connections (database, log, shared memory), Redis and
 * LISTEN connections, the worker threads' channels, a file being indexed.
 */
const OWN_DESCRIPTORS = 64;

/** Pipes of one child process: its IPC channel and standard streams, with room to spare. */
const PER_CHILD_PROCESS = 4;

/** Used when the system does not say (Node raises its soft limit to the hard one; 1024 is the common floor). */
const ASSUMED_LIMIT = 1024;

/**
 * The most descriptors this process may open (its soft `RLIMIT_NOFILE`, which Node raises to the hard
 * limit at start), or undefined where the system does not say.
 */
export function descriptorLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (line?.[1] === 'unlimited') return Number.MAX_SAFE_INTEGER;
    if (line?.[1] !== undefined) return Number(line[1]);
  } catch {
    // not Linux: ask a shell, which inherits the limit
  }
  try {
    const text = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2000 }).trim();
    if (text === 'unlimited') return Number.MAX_SAFE_INTEGER;
    const value = Number(text);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

export interface ConnectionBudget {
  /** The process's descriptor limit (assumed when unknown). */
  descriptors: number;
  known: boolean;
  /** Kept for the store, the bot processes and the server itself. */
  reserved: number;
  /** Connections open at once. */
  maxConnections: number;
  /** Set when a configured limit was lowered to what the descriptors allow. */
  lowered?: { configured: number };
}

/**
 * How many connections the server may hold: what the descriptors allow once the store's connections,
 * the bot processes' pipes and the server's own are set aside, halved because each connection may hold
 * a file open besides its socket (an upload or a download). A configured limit above it is lowered.
 */
export function connectionBudget(config: Config, limit = descriptorLimit()): ConnectionBudget {
  const descriptors = limit ?? ASSUMED_LIMIT;
  const store = config.store.kind === 'postgres' ? config.store.poolSize + 1 : 0;
  const childProcesses = config.sandboxProcesses + config.sdkBots.maxProcesses;
  const reserved = OWN_DESCRIPTORS + store + PER_CHILD_PROCESS * childProcesses;
  const affordable = Math.max(1, Math.floor((descriptors - reserved) / 2));
  const configured = config.connections.maxConnections;
  const budget = { descriptors, known: limit !== undefined, reserved };
  if (configured === 'auto') return { ...budget, maxConnections: affordable };
  if (configured <= affordable) return { ...budget, maxConnections: configured };
  return { ...budget, maxConnections: affordable, lowered: { configured } };
}
