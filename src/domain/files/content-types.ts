import path from 'node:path';

/** Content types by file extension, for a key given without `contentType` (the hosted product infers it too). */
const BY_EXTENSION: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export function contentTypeOf(key: string): string {
  return BY_EXTENSION[path.extname(key).toLowerCase()] ?? DEFAULT_CONTENT_TYPE;
}

/** The media type of a content type, without parameters: `text/html; charset=utf-8` -> `text/html`. */
export function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** RFC 9110 `token` characters (section 5.6.2): what a type, subtype and each parameter's name and value consist of. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const OWS = '[ \\t]*';
/**
 * A content type as a file may declare it: `type/subtype`, then `; name=value` parameters whose values
 * are tokens too (no quoted strings). Nothing else, so no CR or LF: it is sent back as a header.
 */
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:${OWS};${OWS}(?:${TOKEN}=${TOKEN})?)*${OWS}$`);

export function isValidContentType(value: string): boolean {
  return CONTENT_TYPE.test(value);
}

/**
 * The media types a browser may show from Parley's own origin, when it has no content origin: none of
 * them runs script in a browser (no HTML, no SVG, no XML). Anything else is served as an attachment.
 */
export const INLINE_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'application/pdf',
  'text/plain',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'audio/webm',
  'video/mp4',
  'video/webm',
  'video/ogg',
]);
