import type { Links } from '../bots/links.ts';
import type { Downloadable, FileContents } from '../files/contents.ts';
import { CONTENT_PREFIX } from '../files/files.ts';
import { invalidPayload, payloadTooLarge } from '../shared/errors.ts';
import type { ApiError } from '../shared/errors.ts';
import { fetchTenantUrl, TenantFetchFailed } from '../shared/tenant-fetch.ts';
import { AUDIO_MAX_BYTES } from './schemas.ts';

/** Audio to transcribe, as the provider's multipart upload takes it. */
export interface Audio {
  bytes: Uint8Array;
  mimeType: string;
  /** With the extension of its type: OpenAI tells the format by the upload's file name. */
  fileName: string;
}

/** The formats OpenAI's `/audio/transcriptions` takes, by media type. */
const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mpga': 'mpga',
  'audio/wav': 'wav',
  'audio/wave': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/mp4': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-m4a': 'm4a',
  'video/mp4': 'mp4',
};

const MEDIA_TYPES: Record<string, string> = Object.fromEntries(
  Object.entries(EXTENSIONS)
    .reverse()
    .map(([type, extension]) => [extension, type]),
);

function mediaTypeOf(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type === '' || type === 'application/octet-stream' ? undefined : type;
}

function extensionOf(path: string): string | undefined {
  return /\.([a-z0-9]{2,5})$/i.exec(path)?.[1]?.toLowerCase();
}

function audio(bytes: Uint8Array, mimeType: string | undefined, path: string): Audio {
  const fromPath = extensionOf(path);
  const type = mimeType ?? (fromPath === undefined ? undefined : MEDIA_TYPES[fromPath]) ?? 'audio/mpeg';
  const extension = EXTENSIONS[type] ?? fromPath ?? 'mp3';
  return { bytes, mimeType: type, fileName: `audio.${extension}` };
}

function tooLarge(): ApiError {
  return payloadTooLarge(`url: the audio has more than ${AUDIO_MAX_BYTES} bytes`);
}

/**
 * Reads the audio a `transcribe-audio` request names: a `data:` URI, a file of this server's Files API
 * (its signed or public URL, read from the store), or any other URL, read under the policy of outgoing
 * webhooks (a tenant's URL must not reach the server's own network). At most AUDIO_MAX_BYTES.
 */
export class AudioSource {
  constructor(
    private readonly links: Links,
    private readonly contents: FileContents,
    private readonly allowPrivate: boolean,
  ) {}

  async read(url: string, mimeType: string | undefined, signal: AbortSignal): Promise<Audio> {
    const declared = mediaTypeOf(mimeType);
    if (url.startsWith('data:')) return fromDataUri(url, declared);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidPayload('url must be an http(s) URL or a data: URI');
    }
    const own = this.ownFile(parsed);
    if (own) {
      const content = await own;
      if (content.size > AUDIO_MAX_BYTES) throw tooLarge();
      return audio(await readAll(content), declared ?? mediaTypeOf(content.contentType), content.fileName);
    }
    try {
      const fetched = await fetchTenantUrl(parsed, {
        maxBytes: AUDIO_MAX_BYTES,
        allowPrivate: this.allowPrivate,
        signal,
      });
      return audio(fetched.bytes, declared ?? mediaTypeOf(fetched.contentType), fetched.url.pathname);
    } catch (err) {
      if (!(err instanceof TenantFetchFailed)) throw err;
      if (err.tooLarge) throw tooLarge();
      throw invalidPayload(`url: ${err.message}`);
    }
  }

  /** The content a URL of this server's `/file-content` routes names, or undefined for another URL. */
  private ownFile(url: URL): Promise<Downloadable> | undefined {
    const origins = [this.links.contentBaseUrl, this.links.baseUrl].map((base) => new URL(base).origin);
    if (!origins.includes(url.origin) || !url.pathname.startsWith(`${CONTENT_PREFIX}/`)) return undefined;
    const rest = url.pathname
      .slice(CONTENT_PREFIX.length + 1)
      .split('/')
      .map(decodeURIComponent);
    if (rest.length === 2 && rest[0] === 'public' && rest[1]) return this.contents.downloadPublic(rest[1]);
    if (rest.length === 1 && rest[0]) {
      return this.contents.download(rest[0], {
        expires: url.searchParams.get('expires') ?? undefined,
        signature: url.searchParams.get('signature') ?? undefined,
      });
    }
    return undefined;
  }
}

/** `data:[<type>][;base64],<data>`: the audio in the request itself. */
function fromDataUri(url: string, declared: string | undefined): Audio {
  const comma = url.indexOf(',');
  const header = url.slice('data:'.length, comma < 0 ? undefined : comma);
  if (comma < 0 || !header.endsWith(';base64'))
    throw invalidPayload('url: a data: URI of audio must be base64 (`data:audio/wav;base64,…`)');
  const data = url.slice(comma + 1);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data)) throw invalidPayload('url: the data: URI is not base64');
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > AUDIO_MAX_BYTES) throw tooLarge();
  if (bytes.length === 0) throw invalidPayload('url: the data: URI has no audio');
  return audio(bytes, declared ?? mediaTypeOf(header.slice(0, -';base64'.length)), '');
}

async function readAll(content: Downloadable): Promise<Uint8Array> {
  return Buffer.concat(await content.read().toArray());
}
