// Stored vectors read back: the floats of a driver's buffer, read in place where its bytes start on a
// float's boundary (no copy: a search reads hundreds), and copied where they do not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromBytes, toBytes } from '../src/store/vectors/bytes.ts';

const VECTOR = new Float32Array([0.5, -1.25, 3, 0]);

test('aligned bytes are read in place', () => {
  const bytes = toBytes(VECTOR);
  const floats = fromBytes(bytes);
  assert.deepEqual([...floats], [...VECTOR]);
  assert.equal(floats.buffer, bytes.buffer, 'a view of the same memory');
});

test('bytes that start off a float’s boundary are copied, the same floats', () => {
  const pool = new Uint8Array(VECTOR.byteLength + 1);
  pool.set(toBytes(VECTOR), 1);
  const bytes = pool.subarray(1);
  const floats = fromBytes(bytes);
  assert.deepEqual([...floats], [...VECTOR]);
  assert.notEqual(floats.buffer, bytes.buffer);
});
