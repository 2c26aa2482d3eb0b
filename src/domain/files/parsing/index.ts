import type { PassageDraft } from '../passages.ts';
import { chunked, DEFAULT_CHUNKING } from './chunking.ts';
import { UnindexableDocument } from './formats.ts';
import type { DocumentFormat } from './formats.ts';
import type { ChunkingOptions } from './chunking.ts';
import { htmlPassages } from './html.ts';
import { markdownPassages } from './markdown.ts';
import { pdfPassages } from './pdf.ts';
import { textPassages } from './text.ts';

export interface ParseRequest {
  format: DocumentFormat;
  data: Uint8Array;
  chunking?: Partial<ChunkingOptions>;
}

export { UnindexableDocument };

/** A document's passages: parsed by its format's structure, then chunked. */
export async function parseDocument(request: ParseRequest): Promise<PassageDraft[]> {
  const text = () => new TextDecoder('utf-8', { fatal: false }).decode(request.data);
  let passages: PassageDraft[];
  switch (request.format) {
    case 'markdown':
      passages = markdownPassages(text());
      break;
    case 'html':
      passages = htmlPassages(text());
      break;
    case 'text':
      passages = textPassages(text());
      break;
    case 'pdf':
      try {
        passages = await pdfPassages(request.data);
      } catch (err) {
        throw new UnindexableDocument(`The PDF could not be read: ${(err as Error).message || String(err)}`);
      }
      break;
  }
  return chunked(passages, { ...DEFAULT_CHUNKING, ...request.chunking });
}
