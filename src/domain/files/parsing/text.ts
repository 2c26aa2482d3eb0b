import type { PassageDraft } from '../passages.ts';

const LIST_ITEM = /^\s*([-*•+]|\d+[.)])\s+/;

/** Plain text: paragraphs are separated by blank lines; a block whose every line is an item is a list. */
export function textPassages(text: string): PassageDraft[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block !== '')
    .map((block) => ({
      type: block.split('\n').every((line) => LIST_ITEM.test(line)) ? 'list' : 'paragraph',
      content: block,
    }));
}
