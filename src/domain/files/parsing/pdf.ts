import { getDocumentProxy } from 'unpdf';
import type { PassageDraft } from '../passages.ts';

interface Line {
  text: string;
  /** Font size, from the text matrix. */
  size: number;
  /** Baseline, from the bottom of the page. */
  y: number;
  page: number;
}

const BULLET = /^\s*([-*•▪◦‣+]|\d+[.)])\s+/;

/** The lines of each page, in reading order as the PDF lays out its text. */
async function linesOf(data: Uint8Array): Promise<Line[]> {
  const pdf = await getDocumentProxy(data, { verbosity: 0, isEvalSupported: false, stopAtErrors: true });
  const lines: Line[] = [];
  try {
    for (let page = 1; page <= pdf.numPages; page++) {
      const content = await (await pdf.getPage(page)).getTextContent();
      let current: Line | undefined;
      const close = () => {
        if (current && current.text.trim())
          lines.push({ ...current, text: current.text.replace(/\s+/g, ' ').trim() });
        current = undefined;
      };
      for (const item of content.items) {
        if (!('str' in item)) continue;
        const transform = item.transform as number[];
        const size = Math.abs(transform[3] ?? 0) || Math.abs(transform[0] ?? 0) || item.height;
        const y = transform[5] ?? 0;
        if (current && Math.abs(current.y - y) > Math.max(2, size / 2)) close();
        if (item.str) {
          current ??= { text: '', size, y, page };
          current.text += item.str;
          current.size = Math.max(current.size, item.str.trim() ? size : 0);
        }
        if (item.hasEOL) close();
      }
      close();
    }
  } finally {
    await pdf.destroy();
  }
  return lines;
}

/** The size most of the text is set in (by characters): the body's. */
function bodySize(lines: Line[]): number {
  const weight = new Map<number, number>();
  for (const line of lines) {
    const size = Math.round(line.size * 2) / 2;
    weight.set(size, (weight.get(size) ?? 0) + line.text.length);
  }
  return [...weight].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 12;
}

/**
 * A PDF's text (PDF.js, through unpdf) as passages with their page numbers: lines set well above
 * the body size are titles and subtitles, bulleted lines lists, and the other lines paragraphs,
 * broken where the vertical gap between lines is wider than the line spacing.
 */
export async function pdfPassages(data: Uint8Array): Promise<PassageDraft[]> {
  const lines = await linesOf(data);
  const body = bodySize(lines);
  const passages: PassageDraft[] = [];
  let block: { type: PassageDraft['type']; lines: Line[] } | undefined;
  const close = () => {
    if (block) {
      const first = block.lines[0] as Line;
      const joiner = block.type === 'list' ? '\n' : ' ';
      passages.push({
        type: block.type,
        content: block.lines.map((l) => l.text).join(joiner),
        pageNumber: first.page,
      });
    }
    block = undefined;
  };
  for (const line of lines) {
    if (line.size >= body * 1.6 || line.size >= body * 1.15) {
      close();
      const title = line.size >= body * 1.6;
      passages.push({
        type: title ? 'title' : 'subtitle',
        content: `${title ? '#' : '##'} ${line.text}`,
        pageNumber: line.page,
      });
      continue;
    }
    const type = BULLET.test(line.text) ? 'list' : 'paragraph';
    const last = block?.lines[block.lines.length - 1];
    const gap = last ? last.y - line.y : 0;
    const continues =
      block !== undefined &&
      last !== undefined &&
      last.page === line.page &&
      gap > 0 &&
      gap <= line.size * 1.9 &&
      (block.type === type || (block.type === 'list' && type === 'paragraph' && gap <= line.size * 1.3));
    if (!continues) {
      close();
      block = { type, lines: [] };
    }
    (block as { lines: Line[] }).lines.push(line);
  }
  close();
  return passages;
}
