// The in-process caches (src/domain/shared/caches.ts): what a revocation clears stays cleared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Caches, TtlMap } from '../src/domain/shared/caches.ts';

/** A read the test finishes when it chooses, as a store's query that is still on its way. */
function pendingRead<V>(): { load: () => Promise<V>; finish: (value: V) => void } {
  let finish: (value: V) => void = () => undefined;
  const answer = new Promise<V>((resolve) => (finish = resolve));
  return { load: () => answer, finish };
}

test('a value read before access changed is answered to its caller but not kept', async () => {
  const caches = new Caches();
  const read = pendingRead<string>();
  const during = caches.principals.through('token-hash', read.load);
  caches.accessChanged(); // the token was revoked while its lookup was on its way
  read.finish('principal as it was');
  assert.equal(await during, 'principal as it was');
  assert.equal(caches.principals.get('token-hash'), undefined, 'the next request reads again');
});

test('a value read with nothing cleared meanwhile is kept, and served without reading again', async () => {
  const map = new TtlMap<string | null>();
  let reads = 0;
  const load = async () => {
    reads++;
    return null;
  };
  assert.equal(await map.through('unknown', load), null);
  assert.equal(await map.through('unknown', load), null, 'null is an answer, kept as one');
  assert.equal(reads, 1);
  assert.equal(await map.through('absent', async () => undefined), undefined);
  assert.equal(map.get('absent'), undefined, 'undefined is no answer: nothing kept');
});

test('deleting any key while a read is on its way keeps that read out', async () => {
  const map = new TtlMap<number>();
  const read = pendingRead<number>();
  const during = map.through('workspace', read.load);
  map.delete('workspace');
  read.finish(1);
  assert.equal(await during, 1);
  assert.equal(map.get('workspace'), undefined);
});
