const MB = 1024 * 1024;

/** Largest request body each API accepts; a larger one answers 413 `PayloadTooLarge`. */
export const PAYLOAD_LIMITS = {
  admin: 50 * MB,
  runtime: 1 * MB,
  /** `transcribe-audio`: 25 MB of audio in a base64 `data:` URI. */
  audio: 34 * MB,
  chat: 1 * MB,
  files: 1 * MB,
  tables: 40 * MB,
  webhook: 100 * MB,
} as const;

export type ApiName = keyof typeof PAYLOAD_LIMITS;

/** The server-wide ceiling: no API may accept more than this. */
export const LARGEST_PAYLOAD = Math.max(...Object.values(PAYLOAD_LIMITS));
