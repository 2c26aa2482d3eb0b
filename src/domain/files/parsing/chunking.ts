import type { PassageDraft } from '../passages.ts';

export interface ChunkingOptions {
  /** Longest passage, in characters: longer blocks are cut at sentence (or line) boundaries. */
  maximumChunkLength: number;
  /** Shorter paragraphs are joined to the paragraph that follows them. */
  minimumParagraphLength: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { maximumChunkLength: 1500, minimumParagraphLength: 0 };

/** Cuts text into pieces of at most `max` characters at the last boundary that fits. */
function cut(text: string, max: number, boundaries: RegExp): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    let at = -1;
    for (const match of window.matchAll(boundaries)) {
      if (match.index !== undefined && match.index + match[0].length <= max)
        at = match.index + match[0].length;
    }
    // No boundary in reach: cut at the last space, or hard at the limit.
    if (at <= max / 4) at = window.lastIndexOf(' ') > max / 4 ? window.lastIndexOf(' ') + 1 : max;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at);
  }
  if (rest.trim()) pieces.push(rest.trim());
  return pieces.filter((p) => p !== '');
}

/**
 * Passages sized for search, keeping the document's structure: headings stay alone, a block longer
 * than the maximum is cut where its sentences (paragraphs, quotes) or lines (lists, tables, code)
 * end, each piece keeping the block's type and page; short paragraphs may join the next one.
 */
export function chunked(
  passages: PassageDraft[],
  options: ChunkingOptions = DEFAULT_CHUNKING,
): PassageDraft[] {
  const out: PassageDraft[] = [];
  let carry: PassageDraft | undefined;
  for (const passage of passages) {
    let current = passage;
    if (carry) {
      if (current.type === 'paragraph')
        current = { ...current, content: `${carry.content}\n\n${current.content}` };
      else out.push(carry);
      carry = undefined;
    }
    if (current.type === 'paragraph' && current.content.length < options.minimumParagraphLength) {
      carry = current;
      continue;
    }
    const max = options.maximumChunkLength;
    const prose = current.type === 'paragraph' || current.type === 'blockquote';
    const pieces =
      current.type === 'title' || current.type === 'subtitle' || current.content.length <= max
        ? [current.content]
        : cut(current.content, max, prose ? /[.!?](\s+|$)/g : /\n/g);
    for (const content of pieces) out.push({ ...current, content });
  }
  if (carry) out.push(carry);
  return out;
}
