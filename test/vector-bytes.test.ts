// Stored vectors read back: the floats of a driver's buffer, read in place where its bytes start on a
// float's boundary (no copy: a search reads hundreds), and copied where they do not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromBase64s, fromBytes, toBytes } from '../src/store/vectors/bytes.ts';

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

test('vectors sent as base64 (in lines, as PostgreSQL encodes) are read into one buffer, each on a float’s boundary', () => {
  const vectors = [VECTOR, new Float32Array([1, 2]), new Float32Array(100).map((_, i) => i / 7)];
  // PostgreSQL's encode(…, 'base64') breaks its lines every 76 characters.
  const texts = vectors.map((v) =>
    Buffer.from(toBytes(v))
      .toString('base64')
      .replace(/(.{76})/g, '$1\n'),
  );
  assert.ok(texts[2]?.includes('\n'));
  const bytes = fromBase64s(texts);
  assert.deepEqual(
    bytes.map((b) => [...fromBytes(b)]),
    vectors.map((v) => [...v]),
  );
  assert.ok(bytes.every((b) => b.buffer === bytes[0]?.buffer && b.byteOffset % 4 === 0));
});
