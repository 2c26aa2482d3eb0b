import { createHash, randomFillSync } from 'node:crypto';
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
  interface: 'intrver',
  plugin: 'plugver',
  channelSend: 'chsend',
  llmCall: 'llmcall',
  llmProvider: 'llmprov',
  handoff: 'hoff',
  handoffEvent: 'hoffevt',
  botVersion: 'botver',
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

/** Crockford's base32, as ULIDs are written. */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** Digits of the number in a derived id: 32,768 records can be derived from one. */
const DERIVED_DIGITS = 3;

/**
 * The id of the `n`th record made from another (`from`, a Parley id): the same arguments give the same id,
 * so a writer that runs again finds what it made the first time by its id. It is `from`'s ULID followed
 * by `n` in three base32 digits, so the records made from one sort in their order, after those made from
 * an older one, and never equal an id `newId` hands out (those are shorter).
 */
export function derivedId(kind: IdKind, from: string, n: number): string {
  if (!Number.isSafeInteger(n) || n < 0 || n >= BASE32.length ** DERIVED_DIGITS) {
    throw new RangeError(`a derived id takes a number from 0 to ${BASE32.length ** DERIVED_DIGITS - 1}`);
  }
  const base = from.slice(from.indexOf('_') + 1);
  let ulid = base;
  if (!ULID.test(base)) {
    const digest = createHash('sha256').update(from).digest();
    ulid = Array.from(digest.subarray(0, 26), (byte) => BASE32[byte % 32]).join('');
  }
  let digits = '';
  for (let rest = n, i = 0; i < DERIVED_DIGITS; i++, rest = Math.floor(rest / 32)) {
    digits = (BASE32[rest % 32] ?? '0') + digits;
  }
  return `${ID_PREFIXES[kind]}_${ulid}${digits}`;
}

/** The shape of a webhook id (a UUID, as `randomUUID` makes them): anything else names no webhook. */
export function isWebhookId(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
