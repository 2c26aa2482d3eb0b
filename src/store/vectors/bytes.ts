/**
 * Vectors as the store keeps them (`passage_vectors`, `row_vectors`): little-endian float32 bytes, the
 * same on SQLite and Postgres.
 */

/** Whether this machine's floats are little-endian already (every platform Node runs on today). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function toBytes(vector: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN)
    return new Uint8Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytes;
}

/**
 * The floats of stored bytes, read in place where they can be: a view of the driver's own buffer when
 * it starts on a float's boundary (the drivers' pooled buffers do), so the view lives as long as the
 * bytes; a copy otherwise (a shared pool may start them at any byte). A search reads hundreds of vectors:
 * a copy of each was an allocation outside the JavaScript heap, and on PostgreSQL (a driver's buffer
 * each, besides) those made the engine collect its whole heap every few dozen searches, the slowest 1 in
 * 100 of them.
 */
export function fromBytes(bytes: Uint8Array): Float32Array {
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0)
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes).buffer, 0, bytes.byteLength >> 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.byteLength >> 2);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

/**
 * The bytes of vectors sent as base64 text (line breaks are skipped), decoded into one buffer, each a
 * view of it, in order. A driver that reads `bytea` as text (node-postgres) gets it in hex and decodes
 * each value into a buffer of its own: a search's 500 vectors of 384 dimensions took 2.8 ms to read that
 * way (Node 20), and 0.8 ms as base64 into one buffer (a third less text, decoded four times faster).
 */
export function fromBase64s(texts: readonly string[]): Uint8Array[] {
  let most = 0;
  for (const text of texts) most += (text.length * 3) >> 2;
  // Its own memory, at offset 0: every vector (a whole number of floats) starts on a float's boundary.
  const all = Buffer.allocUnsafeSlow(most);
  let at = 0;
  return texts.map((text) => {
    const length = all.write(text, at, 'base64');
    const bytes = all.subarray(at, at + length);
    at += length;
    return bytes;
  });
}
