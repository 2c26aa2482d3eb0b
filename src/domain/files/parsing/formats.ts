import path from 'node:path';
import { mediaType } from '../content-types.ts';

/**
 * Which files can be indexed, and how a failure to is told: what the main thread needs of parsing,
 * without the parsers themselves (they load in the parser's worker thread only).
 */
export type DocumentFormat = 'markdown' | 'html' | 'pdf' | 'text';

/** A file that cannot be indexed: its format, or its content. The reason becomes `failedStatusReason`. */
export class UnindexableDocument extends Error {}

const BY_MEDIA_TYPE: Record<string, DocumentFormat> = {
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'text/plain': 'text',
  'text/csv': 'text',
  'application/json': 'text',
};
const BY_EXTENSION: Record<string, DocumentFormat> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.pdf': 'pdf',
  '.txt': 'text',
};

/** The format a file is parsed as: by its content type, else by its key's extension. */
export function formatOf(contentType: string, key: string): DocumentFormat | undefined {
  return BY_MEDIA_TYPE[mediaType(contentType)] ?? BY_EXTENSION[path.extname(key).toLowerCase()];
}
