import { Lexer } from 'marked';
import type { PassageDraft } from '../passages.ts';

const TYPES: Record<string, PassageDraft['type'] | undefined> = {
  paragraph: 'paragraph',
  text: 'paragraph',
  html: 'paragraph',
  list: 'list',
  table: 'table',
  code: 'code',
  blockquote: 'blockquote',
};

/** Markdown's blocks (marked's lexer), each a passage of its kind: `#` a title, deeper headings subtitles. */
export function markdownPassages(text: string): PassageDraft[] {
  const passages: PassageDraft[] = [];
  for (const token of new Lexer({ gfm: true }).lex(text)) {
    const content = token.raw.trim();
    if (!content) continue;
    if (token.type === 'heading') {
      passages.push({ type: (token as { depth: number }).depth === 1 ? 'title' : 'subtitle', content });
      continue;
    }
    const type = TYPES[token.type];
    if (type) passages.push({ type, content });
  }
  return passages;
}
