import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type WebSocket from 'ws';

/**
 * Packages of bench/'s own package.json (the peers and their client), installed by the bench on first
 * run. They are loaded at run time, by path, so that the product's type-check and lint pass on a clone
 * where bench/node_modules is not installed.
 */
export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_MODULES = path.join(BENCH_DIR, 'node_modules');

export function peersInstalled(): boolean {
  return ['botkit', 'botbuilder-adapter-web', 'botbuilder', 'offline-directline', 'express', 'ws'].every(
    (name) => existsSync(path.join(BENCH_MODULES, name, 'package.json')),
  );
}

/** The small part of `ws` (7.x) the Botkit client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  terminate(): void;
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: string | Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: () => void): this;
}
export type WebSocketClass = new (url: string, options?: { perMessageDeflate?: boolean }) => WebSocketLike;

const requireFromBench = createRequire(path.join(BENCH_DIR, 'package.json'));
const requireFromRoot = createRequire(path.join(BENCH_DIR, '..', 'package.json'));

/**
 * The product's own `ws` (8.x, the root package's), for the clients of Parley's listen route: a bare
 * `import 'ws'` from bench/ would find bench/'s 7.x once the peers are installed.
 */
export function loadParleyWebSocket(): typeof WebSocket {
  return requireFromRoot('ws') as typeof WebSocket;
}

export function loadWebSocket(): WebSocketClass {
  return requireFromBench('ws') as WebSocketClass;
}
