// The retrieval scenario's corpus: documents of made-up words, and questions whose answer passage is
// known. A passage names a few concepts, each by one of its synonyms (made-up words too), among filler
// words; the bench's embedding model (the test model server's embedder with SYNONYMS of its own, this
// module's `synonyms`) maps every synonym of a concept to the same dimension, as a real model maps
// words of one meaning close together. Two sets of questions ask for a passage:
// - literal: some of the passage's own concept words and filler words (what full-text search finds);
// - paraphrase: the passage's concepts by their OTHER synonyms, no word in common with the passage
//   (found only by meaning).
// Everything is drawn from a seeded generator: every run builds the same corpus and questions.

import { seeded } from '../../src/store/seeded.ts';

/** Concepts, and the synonyms each is named by. */
const CONCEPTS = 600;
const SYNONYMS_PER_CONCEPT = 3;
/** Filler words (no concept): most of a passage's words, drawn with a skew like a real text's. */
const FILLERS = 3000;
/** Concepts a passage names, filler words around them. */
const PASSAGE_CONCEPTS = 3;
const PASSAGE_FILLERS = { min: 10, max: 18 };
/** Passages (paragraphs) a document has. */
export const PASSAGES_PER_DOCUMENT = 50;

export interface Question {
  query: string;
  /** The document (its key) and the paragraph (0-based) that answer it. */
  key: string;
  paragraph: number;
}

export interface RetrievalCorpus {
  /** The bench embedding model's table: each synonym -> its concept. */
  synonyms: Record<string, string>;
  /** Markdown documents by key, one paragraph per passage. */
  documents(from: number, count: number): { key: string; content: string }[];
  literal: Question[];
  paraphrase: Question[];
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vor', 'el', 'di', 'pan', 'gri', 'os', 'be', 'nal'];
const MORE_SYLLABLES = ['chu', 'fi', 'zan', 'quo', 'ix', 'mer', 'dal', 'wy', 'ost', 'plu', 'har', 'ev'];

/** Distinct made-up words of 2 to 4 syllables. */
function madeUpWords(random: () => number, count: number, taken: Set<string>): string[] {
  const all = [...SYLLABLES, ...MORE_SYLLABLES];
  const words: string[] = [];
  while (words.length < count) {
    const n = 2 + Math.floor(random() * 3);
    const word = Array.from({ length: n }, () => all[Math.floor(random() * all.length)]).join('');
    if (taken.has(word)) continue;
    taken.add(word);
    words.push(word);
  }
  return words;
}

interface Passage {
  /** Concept index -> the synonym (0..SYNONYMS_PER_CONCEPT-1) the passage names it by. */
  concepts: [number, number][];
  fillers: string[];
}

/**
 * The corpus of `seed`: `questionDocuments` documents hold the passages the questions ask for
 * (`questionsPerSet` of each set, from distinct passages); any document past them is filler, drawn the
 * same way, so that a larger corpus holds the same questions and answers among more passages.
 */
export function retrievalCorpus(
  seed: number,
  questionDocuments: number,
  questionsPerSet: number,
): RetrievalCorpus {
  const random = seeded(seed);
  const taken = new Set<string>();
  const conceptWords = Array.from({ length: CONCEPTS }, () =>
    madeUpWords(random, SYNONYMS_PER_CONCEPT, taken),
  );
  const fillers = madeUpWords(random, FILLERS, taken);
  const synonyms: Record<string, string> = {};
  conceptWords.forEach((words, concept) => {
    for (const word of words) synonyms[word] = `c${concept}`;
  });

  const passageOf = (random: () => number): Passage => {
    const concepts = new Set<number>();
    while (concepts.size < PASSAGE_CONCEPTS) concepts.add(Math.floor(random() * CONCEPTS));
    const length =
      PASSAGE_FILLERS.min + Math.floor(random() * (PASSAGE_FILLERS.max - PASSAGE_FILLERS.min + 1));
    return {
      concepts: [...concepts].map((c) => [c, Math.floor(random() * SYNONYMS_PER_CONCEPT)]),
      fillers: Array.from({ length }, () => fillers[Math.floor(fillers.length * random() ** 2)] as string),
    };
  };
  const wordOf = ([concept, synonym]: [number, number]) => conceptWords[concept]?.[synonym] as string;
  const textOf = (p: Passage, random: () => number): string => {
    const words = [...p.fillers];
    for (const c of p.concepts) words.splice(Math.floor(random() * (words.length + 1)), 0, wordOf(c));
    const text = words.join(' ');
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  };
  /** Document `d`'s passages: each document has its own generator, so any range can be drawn alone. */
  const passagesOf = (d: number) => {
    const own = seeded(seed * 1_000_003 + d);
    return Array.from({ length: PASSAGES_PER_DOCUMENT }, () => {
      const passage = passageOf(own);
      return { passage, text: textOf(passage, own) };
    });
  };
  const keyOf = (d: number) => `doc-${String(d).padStart(5, '0')}.md`;

  const literal: Question[] = [];
  const paraphrase: Question[] = [];
  const asked = new Set<string>();
  const questionRandom = seeded(seed + 7);
  const cache = new Map<number, ReturnType<typeof passagesOf>>();
  while (literal.length < questionsPerSet) {
    const d = Math.floor(questionRandom() * questionDocuments);
    const paragraph = Math.floor(questionRandom() * PASSAGES_PER_DOCUMENT);
    if (asked.has(`${d}:${paragraph}`)) continue;
    asked.add(`${d}:${paragraph}`);
    const passages = cache.get(d) ?? passagesOf(d);
    cache.set(d, passages);
    const { passage } = passages[paragraph] as { passage: Passage };
    const key = keyOf(d);
    // Two of its concepts by its own words, and two of its rarer filler words.
    const rare = [...new Set(passage.fillers)].sort((a, b) => fillers.indexOf(b) - fillers.indexOf(a));
    literal.push({
      key,
      paragraph,
      query: [
        wordOf(passage.concepts[0] as [number, number]),
        rare[0],
        wordOf(passage.concepts[1] as [number, number]),
        rare[1],
      ].join(' '),
    });
    // All its concepts, each by a synonym the passage does not use.
    paraphrase.push({
      key,
      paragraph,
      query: passage.concepts
        .map(([c, s]) =>
          wordOf([
            c,
            (s + 1 + Math.floor(questionRandom() * (SYNONYMS_PER_CONCEPT - 1))) % SYNONYMS_PER_CONCEPT,
          ]),
        )
        .join(' '),
    });
  }
  return {
    synonyms,
    documents: (from, count) =>
      Array.from({ length: count }, (_, i) => ({
        key: keyOf(from + i),
        content: `${passagesOf(from + i)
          .map((p) => p.text)
          .join('\n\n')}\n`,
      })),
    literal,
    paraphrase,
  };
}

/** The bench's seed, and the corpus the scenario and its embedding model share. */
export const RETRIEVAL_SEED = 33;
export const RETRIEVAL_QUESTION_DOCUMENTS = 40;
export const RETRIEVAL_QUESTIONS = 200;
export const benchCorpus = () =>
  retrievalCorpus(RETRIEVAL_SEED, RETRIEVAL_QUESTION_DOCUMENTS, RETRIEVAL_QUESTIONS);

/** Recall@k and mean reciprocal rank of ranked answers: each is the list of (key, paragraph) found, best first. */
export function quality(
  questions: Question[],
  answers: { key: string; paragraph: number }[][],
  k: number,
): { recall: number; mrr: number } {
  let found = 0;
  let reciprocal = 0;
  questions.forEach((q, i) => {
    const rank = (answers[i] ?? []).findIndex((a) => a.key === q.key && a.paragraph === q.paragraph);
    if (rank >= 0 && rank < k) found++;
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  });
  return { recall: found / questions.length, mrr: reciprocal / questions.length };
}
