// The knowledgeAnswer card's words with the model: the prompt that numbers the passages, and the reading
// of the answer (the "not in the passages" marker, the passages it cites) into the reply with its sources.
import type { KnowledgeResult } from './event-object.ts';

/** What the model answers when the passages do not answer the question. */
export const NOT_IN_PASSAGES = 'NOT_IN_PASSAGES';

/** The system prompt: the author's instructions, the rules of the answer, and the passages numbered from 1. */
export function answerPrompt(instructions: string, passages: KnowledgeResult[]): string {
  const numbered = passages.map((p, i) => `[${i + 1}] (from ${p.file.title ?? p.file.key})\n${p.text}`);
  return [
    ...(instructions.trim() ? [instructions.trim()] : []),
    'Answer the question from the numbered passages below and from nothing else. After each statement, ' +
      'cite the passages it comes from by their numbers in square brackets, like [1] or [2][3]. ' +
      `When the passages do not answer the question, answer ${NOT_IN_PASSAGES} and nothing else.`,
    `Passages:\n\n${numbered.join('\n\n')}`,
  ].join('\n\n');
}

/** `[2]`, `[1, 3]`: a citation of passages by their numbers. */
const CITATION = /\s?\[(\d+(?:\s*,\s*\d+)*)\]/g;

/**
 * The model's answer read: undefined when it found no answer (the marker, or nothing); else its text
 * with the citations of passages that do not exist taken out, and the numbers it cites (of 1..count),
 * in the order they first appear.
 */
export function readAnswer(output: string, count: number): { text: string; cited: number[] } | undefined {
  if (output.trim() === '' || output.includes(NOT_IN_PASSAGES)) return undefined;
  const cited: number[] = [];
  const text = output.replace(CITATION, (citation, list: string) => {
    const known = list
      .split(',')
      .map(Number)
      .filter((n) => n >= 1 && n <= count);
    for (const n of known) if (!cited.includes(n)) cited.push(n);
    if (known.length === 0) return '';
    const space = citation.startsWith('[') ? '' : citation[0];
    return `${space}[${known.join(', ')}]`;
  });
  return { text: text.trim(), cited };
}

/** A cited passage as the reply lists it. */
export interface Source {
  number: number;
  title: string;
  url?: string;
}

/**
 * The reply: the answer, then its sources as a Markdown list under the numbers the answer cites them by
 * (`- [1] [faq.md](https://…)`), which the webchat shows as links and a terminal as readable text.
 */
export function replyText(answer: string, sources: Source[]): string {
  if (sources.length === 0) return answer;
  const lines = sources.map((s) => {
    const title = s.title.replace(/([[\]\\])/g, '\\$1');
    return `- [${s.number}] ${s.url === undefined ? title : `[${title}](${markdownUrl(s.url)})`}`;
  });
  return `${answer}\n\nSources:\n${lines.join('\n')}`;
}

/** A URL as a Markdown link's destination: the characters that would end it, escaped. */
function markdownUrl(url: string): string {
  return url.replace(
    /[ \t\r\n()<>]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}
