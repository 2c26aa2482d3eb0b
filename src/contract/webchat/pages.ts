// The webchat's pages outside its API: where the embed script and the share page are, which the server
// serves (api/webchat/assets.ts), the embed script frames and the console shows.

/** The embed script's folder: `<script src="{base}/webchat/v1/inject.js" data-client-id="…">`. */
export const WEBCHAT_ASSETS_PATH = '/webchat/v1/';
export const INJECT_SCRIPT = 'inject.js';
/** A full-page chat with a bot: `{base}/s/{clientId}` (with `?embedded` inside the embed script's frame). */
export const SHARE_PATH = '/s/';

/** What a website pastes to put the bot's chat on its pages (a bubble in the corner). */
export const embedSnippet = (base: string, clientId: string): string =>
  `<script src="${base}${WEBCHAT_ASSETS_PATH}${INJECT_SCRIPT}" data-client-id="${clientId}"></script>`;

// The console's live preview of a bot's webchat: the share page, framed by the console with
// `?preview`, shows the look the console sends it before it is saved. Both sides are browsers of the
// same origin (the console and the share page are both Parley's), and the page takes the look only
// from its parent of its own origin, which could change it anyway; any other page gains nothing.

/** The share page's query parameter that makes it a preview. */
export const PREVIEW_PARAM = 'preview';

/** The fields of the look a preview takes (the official webchat's names). */
export interface PreviewLook {
  botName?: string;
  color?: string;
  botAvatar?: string;
  botDescription?: string;
}

/** The console to the page: show this look (over the saved one). */
export interface PreviewLookMessage {
  source: 'parley-console';
  type: 'look';
  look: PreviewLook;
}

/** The page to the console: it listens (sent once its chat is on screen). */
export interface PreviewReadyMessage {
  source: 'parley-webchat';
  type: 'preview-ready';
}

const LOOK_FIELDS = ['botName', 'color', 'botAvatar', 'botDescription'] as const;

/** The look of a message, if it is a PreviewLookMessage: only its known string fields. */
export function previewLookOf(data: unknown): PreviewLook | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  if (Reflect.get(data, 'source') !== 'parley-console' || Reflect.get(data, 'type') !== 'look')
    return undefined;
  const look: unknown = Reflect.get(data, 'look');
  if (typeof look !== 'object' || look === null) return undefined;
  const fields: PreviewLook = {};
  for (const field of LOOK_FIELDS) {
    const value: unknown = Reflect.get(look, field);
    if (typeof value === 'string' && value.length <= 2000) fields[field] = value;
  }
  return fields;
}

export const isPreviewReady = (data: unknown): data is PreviewReadyMessage =>
  typeof data === 'object' &&
  data !== null &&
  Reflect.get(data, 'source') === 'parley-webchat' &&
  Reflect.get(data, 'type') === 'preview-ready';
