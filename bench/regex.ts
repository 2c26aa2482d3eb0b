/**
 * What a row of `$regex` costs on SQLite: RE2JS (linear time, what Parley matches with) against
 * JavaScript's RegExp (backtracking, what it matched with before), per row of realistic texts, after a
 * warm-up. Run: `node --import tsx bench/regex.ts`.
 */
import { RE2JS } from 're2js';

const ROWS = 3000;
const ROUNDS = 5;

let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const WORDS = ['order', 'shipped', 'delivered', 'refund', 'Paris', 'customer', 'error', 'the', 'a', 'of'];
const sentence = (length: number) => {
  let text = '';
  while (text.length < length) text += `${pick(WORDS)} `;
  return text.slice(0, length);
};

const TEXTS: Record<string, () => string> = {
  'names (12 chars)': () => `${pick(['John', 'Mary', 'Jean', 'Zoë'])} ${pick(['Smith', 'Doe', 'Martin'])}`,
  'emails (24 chars)': () =>
    `${pick(['john', 'mary'])}.${Math.floor(random() * 1000)}@${pick(['example.com', 'mail.org'])}`,
  'sentences (400 chars)': () => sentence(400),
  'documents (4,000 chars)': () => sentence(4000),
};

const PATTERNS: [string, boolean][] = [
  ['error', false],
  ['^john', true],
  ['@example\\.com$', false],
  ['^[\\w.+-]+@[\\w-]+\\.[\\w.]+$', false],
  ['order #?\\d+|(shipped|delivered)', false],
  ['\\bparis\\b', true],
  ['[A-Z][a-z]+ [A-Z][a-z]+', false],
];

function perRow(test: (text: string) => boolean, texts: string[]): number {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (const text of texts) test(text);
    best = Math.min(best, performance.now() - start);
  }
  return (best * 1000) / texts.length;
}

console.log(`µs per row, best of ${ROUNDS} rounds over ${ROWS} rows`);
console.log(['texts', 'pattern', 'i', 'RegExp', 'RE2JS', 'ratio'].join('\t'));
for (const [name, make] of Object.entries(TEXTS)) {
  const texts = Array.from({ length: ROWS }, make);
  for (const [pattern, ignoreCase] of PATTERNS) {
    const native = new RegExp(pattern, ignoreCase ? 'iu' : 'u');
    const re2 = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    const a = perRow((text) => native.test(text), texts);
    const b = perRow((text) => re2.test(text), texts);
    console.log(
      [name, pattern, ignoreCase ? 'i' : '', a.toFixed(2), b.toFixed(2), (b / a).toFixed(1)].join('\t'),
    );
  }
}
