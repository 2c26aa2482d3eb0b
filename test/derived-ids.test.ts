// Derived ids (src/domain/shared/ids.ts): how a turn's replies are found again when the turn runs again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { derivedId, newId } from '../src/domain/shared/ids.ts';

test('a derived id is the same for the same record and number, and sorts in the order of the numbers', () => {
  const event = newId('event');
  assert.equal(derivedId('message', event, 1), derivedId('message', event, 1));
  const ids = [1, 2, 31, 32, 33, 1000].map((n) => derivedId('message', event, n));
  assert.deepEqual([...ids].sort(), ids, 'in the order of their numbers');
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^msg_[0-9A-HJKMNP-TV-Z]{29}$/);
});

test('the ids derived from a later record sort after those of an earlier one, and never equal a new id', () => {
  const earlier = newId('event');
  const later = newId('event');
  assert.ok(derivedId('message', earlier, 999) < derivedId('message', later, 1));
  const fresh = newId('message');
  assert.notEqual(fresh.length, derivedId('message', later, 1).length);
});

test('a derived id takes a number it can write in its digits', () => {
  const event = newId('event');
  assert.throws(() => derivedId('message', event, -1), RangeError);
  assert.throws(() => derivedId('message', event, 32 ** 3), RangeError);
  assert.throws(() => derivedId('message', event, 1.5), RangeError);
  assert.match(derivedId('message', 'evt_not-a-ulid', 1), /^msg_[0-9A-HJKMNP-TV-Z]{29}$/);
});
