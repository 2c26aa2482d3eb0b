// The test model server's embeddings: deterministic vectors from the text alone, so that texts that
// share words are closer than unrelated ones (a semantic search can be tested on them). Each character
// trigram of the lower-cased, space-padded words adds ±1 at a dimension picked by its hash (FNV-1a, the
// sign from another bit, so unrelated trigrams cancel out on average); the vector is then normalized to
// length 1 (all zeros for a text without characters).
//
// A word of the small table of synonyms below stands for its meaning instead: it adds CONCEPT_WEIGHT at
// the dimension of its concept (`car` and `vehicles` alike), so that texts that share no word, but a
// meaning, are close: what a query that only an embedding model can answer needs.

/** Words that mean the same, by the concept they share. */
export const SYNONYMS: Readonly<Record<string, string>> = {
  car: 'vehicle',
  cars: 'vehicle',
  automobile: 'vehicle',
  automobiles: 'vehicle',
  vehicle: 'vehicle',
  vehicles: 'vehicle',
  dog: 'pet',
  dogs: 'pet',
  puppy: 'pet',
  pet: 'pet',
  pets: 'pet',
  price: 'cost',
  prices: 'cost',
  cost: 'cost',
  fee: 'cost',
  fees: 'cost',
};
const CONCEPT_WEIGHT = 6;

/** `synonyms`: another model's table (one that knows other meanings), SYNONYMS by default. */
export function embed(
  text: string,
  dimensions: number,
  synonyms: Readonly<Record<string, string>> = SYNONYMS,
): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    const concept = synonyms[word];
    if (concept !== undefined) {
      const index = fnv1a(`concept:${concept}`) % dimensions;
      vector[index] = (vector[index] ?? 0) + CONCEPT_WEIGHT;
      continue;
    }
    const padded = ` ${word} `;
    for (let at = 0; at + 3 <= padded.length; at++) {
      const hash = fnv1a(padded.slice(at, at + 3));
      const index = hash % dimensions;
      vector[index] = (vector[index] ?? 0) + (hash & 0x80000000 ? -1 : 1);
    }
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

/** The cosine similarity of two vectors of length 1: their dot product. */
export function similarity(a: number[], b: number[]): number {
  return a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);
}

/** OpenAI's `encoding_format: 'base64'`: the little-endian float32 bytes, in base64. */
export function base64Embedding(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
