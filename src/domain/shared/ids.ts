import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulidx';

/** Prefixes of every id Parley hands out; ids are prefix + ULID (sortable by creation time, 28-36 chars). */
export const ID_PREFIXES = {
  account: 'acct',
  workspace: 'wkspace',
  member: 'member',
  bot: 'bot',
  botApiKey: 'bak',
  personalAccessToken: 'pat',
  analytics: 'anl',
  user: 'user',
  conversation: 'conv',
  message: 'msg',
  event: 'evt',
  state: 'state',
  workflow: 'wfl',
  observation: 'obs',
  botLog: 'log',
  file: 'file',
  filePassage: 'psg',
  fileBlob: 'blob',
  knowledgeBase: 'kb',
  table: 'table',
  tableJob: 'tjob',
  webhookSubscription: 'whsub',
  webhookSend: 'whsend',
  integration: 'intver',
  channelSend: 'chsend',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * Random numbers in [0, 1) from the system's CSPRNG, a page of bytes drawn at a time: ulidx's own
 * source asks the system for one byte per character (16 per id), which a profile showed costing more
 * per chat message than some SQL statements.
 */
function pooledRandom(): () => number {
  const pool = new Uint8Array(4096);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return (pool[next++] ?? 0) / 256;
  };
}

const ulid = monotonicFactory(pooledRandom());

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid()}`;
}

/** The shape of a webhook id (a UUID, as `randomUUID` makes them): anything else names no webhook. */
export function isWebhookId(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
