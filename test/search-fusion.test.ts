// Hybrid search's fusion of the ranking by words (BM25) and the ranking by meaning (cosine similarity),
// on its own: the behaviour through searchFiles is in semantic-search.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fused, MEANING_WEIGHT } from '../src/domain/embeddings/ranking.ts';
import type { SearchHit } from '../src/store/index.ts';

const hits = (scores: Record<string, number>): SearchHit[] =>
  Object.entries(scores).map(([id, score]) => ({ id, score }));
const fuse = (words: Record<string, number>, meaning: Record<string, number>, depth = 100) =>
  fused(
    { words: hits(words), meaning: hits(meaning) },
    { limit: 10, wordsDepth: depth, meaningDepth: depth },
  );

test('a passage meaning ranks far ahead outranks one that shares a word of the query and little meaning', () => {
  const ranked = fuse({ shares: 5 }, { answer: 0.8, shares: 0.3 });
  assert.deepEqual(
    ranked.map((h) => h.id),
    ['answer', 'shares'],
  );
  assert.ok(
    Math.abs((ranked[0]?.score ?? 0) - MEANING_WEIGHT * 0.8) < 1e-9,
    'no word shared: its cosine alone',
  );
});

test('words order passages of about the same meaning; scores are in [0, 1]', () => {
  const ranked = fuse({ exact: 3, other: 1 }, { other: 0.5, exact: 0.48, opposite: -0.2 });
  assert.deepEqual(
    ranked.map((h) => h.id),
    ['exact', 'other', 'opposite'],
  );
  assert.ok(ranked.every((h) => h.score >= 0 && h.score <= 1));
  assert.equal(ranked.at(-1)?.score, 0, 'a negative cosine counts as none');
  assert.ok(
    Math.abs((fuse({ both: 2 }, { both: 1 })[0]?.score ?? 0) - 1) < 1e-9,
    'the best by both scores 1',
  );
});

test('a hit one ranking does not hold scores its last score there when it was cut at its depth, else 0', () => {
  const cut = fuse({ wordsOnly: 4 }, { a: 0.6, b: 0.5 }, 2);
  assert.ok(
    Math.abs(
      (cut.find((h) => h.id === 'wordsOnly')?.score ?? 0) - (MEANING_WEIGHT * 0.5 + (1 - MEANING_WEIGHT)),
    ) < 1e-9,
  );
  const whole = fuse({ wordsOnly: 4 }, { a: 0.6, b: 0.5 }, 3);
  assert.ok(Math.abs((whole.find((h) => h.id === 'wordsOnly')?.score ?? 0) - (1 - MEANING_WEIGHT)) < 1e-9);
});
