// The embed script: `<script src="{base}/webchat/v1/inject.js" data-client-id="…"></script>` puts the
// official webchat on any page, as a bubble that opens it or inline in an element of the page. The chat
// runs in a frame of Parley's own origin (its styles and the page's cannot meet), so this script stays
// small; its bubble lives in a shadow root for the same reason.
import { INJECT_SCRIPT, SHARE_PATH, WEBCHAT_ASSETS_PATH } from '../../src/contract/webchat/pages.ts';
import { isFrameMessage } from './config.ts';

interface InitOptions {
  clientId: string;
  /** `bubble` (default): a button in the corner opens the chat. `inline`: the chat fills `target`. */
  mode?: 'bubble' | 'inline';
  /** The element (or a CSS selector of it) that holds an inline chat. */
  target?: string | HTMLElement;
  /** Open the bubble's chat at once. */
  open?: boolean;
  /** Where Parley is, when the script is not loaded from it (default: where the script came from). */
  baseUrl?: string;
}

interface Appearance {
  botName?: string;
  color?: string;
  fabImage?: string;
  botAvatar?: string;
}

interface Instance {
  open(): void;
  close(): void;
  toggle(): void;
}

const SCRIPT_PATH = `${WEBCHAT_ASSETS_PATH}${INJECT_SCRIPT}`;
const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : undefined;
const scriptBase = script?.src ? script.src.slice(0, script.src.indexOf(SCRIPT_PATH)) : undefined;

const CHAT_ICON =
  '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z"/></svg>';
const CLOSE_ICON =
  '<svg viewBox="0 0 24 24" width="26" height="26" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"><path d="M18 6 6 18M6 6l12 12"/></svg>';

const STYLES = `
:host { all: initial; }
.bubble { position: fixed; right: 20px; bottom: 20px; width: 60px; height: 60px; border: 0; border-radius: 50%;
  display: grid; place-items: center; cursor: pointer; color: #fff; background: var(--color); z-index: 2147483646;
  box-shadow: 0 6px 20px rgba(0,0,0,.25); padding: 0; overflow: hidden; transition: transform .15s; }
.bubble:hover { transform: scale(1.06); }
.bubble:focus-visible { outline: 3px solid var(--color); outline-offset: 3px; }
.bubble img { width: 100%; height: 100%; object-fit: cover; }
.panel { position: fixed; right: 20px; bottom: 92px; width: 400px; height: 640px; max-width: calc(100vw - 40px);
  max-height: calc(100vh - 112px); border: 0; border-radius: 16px; overflow: hidden; z-index: 2147483647;
  box-shadow: 0 12px 40px rgba(0,0,0,.25); background: #fff; display: none; }
.panel.open { display: block; }
.panel iframe { width: 100%; height: 100%; border: 0; display: block; }
@media (max-width: 480px) {
  .panel { right: 0; bottom: 0; width: 100vw; height: 100%; max-width: none; max-height: none; border-radius: 0; }
  .panel.open + .bubble { display: none; }
}
`;

function frameFor(base: string, clientId: string, title: string, embedded: boolean): HTMLIFrameElement {
  const frame = document.createElement('iframe');
  frame.src = `${base}${SHARE_PATH}${encodeURIComponent(clientId)}${embedded ? '?embedded' : ''}`;
  frame.title = title;
  frame.setAttribute('allow', 'clipboard-write');
  // The page's origin, even from a page that sends no referrer: where the bot's allowed origins leave
  // it out, Parley answers the frame with why instead of a blank frame (the Origin header tells it as much).
  frame.referrerPolicy = 'origin';
  return frame;
}

async function appearanceOf(base: string, clientId: string): Promise<Appearance> {
  try {
    const res = await fetch(`${base}/webchat/${encodeURIComponent(clientId)}/config`);
    if (!res.ok) return {};
    const body = (await res.json()) as { configuration?: Appearance };
    return body.configuration ?? {};
  } catch {
    return {};
  }
}

function mountInline(base: string, options: InitOptions): Instance {
  const target = typeof options.target === 'string' ? document.querySelector(options.target) : options.target;
  if (!(target instanceof HTMLElement)) {
    throw new Error(
      `parley webchat: no element ${typeof options.target === 'string' ? options.target : 'given'} to hold the chat`,
    );
  }
  const frame = frameFor(base, options.clientId, 'Chat', false);
  frame.style.cssText = 'width:100%;height:100%;min-height:480px;border:0;display:block';
  target.appendChild(frame);
  const none = () => {};
  return { open: none, close: none, toggle: none };
}

function mountBubble(base: string, options: InitOptions): Instance {
  const host = document.createElement('div');
  host.setAttribute('data-parley-webchat', options.clientId);
  const shadow = host.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = STYLES;
  const panel = document.createElement('div');
  panel.className = 'panel';
  panel.setAttribute('role', 'dialog');
  const bubble = document.createElement('button');
  bubble.type = 'button';
  bubble.className = 'bubble';
  bubble.style.setProperty('--color', '#3276EA');
  bubble.setAttribute('aria-expanded', 'false');
  bubble.setAttribute('aria-label', 'Open the chat');
  bubble.innerHTML = CHAT_ICON;
  shadow.append(style, panel, bubble);
  document.body.appendChild(host);

  let title = 'Chat';
  let fab = CHAT_ICON;
  let frame: HTMLIFrameElement | undefined;
  let isOpen = false;
  const render = () => {
    panel.classList.toggle('open', isOpen);
    bubble.setAttribute('aria-expanded', String(isOpen));
    bubble.setAttribute('aria-label', isOpen ? `Close the chat with ${title}` : `Chat with ${title}`);
    bubble.innerHTML = isOpen ? CLOSE_ICON : fab;
  };
  const instance: Instance = {
    open: () => {
      // The chat (and its user and conversation) is made when first opened, not on every page view.
      frame ??= panel.appendChild(frameFor(base, options.clientId, title, true));
      isOpen = true;
      render();
    },
    close: () => {
      isOpen = false;
      render();
      bubble.focus();
    },
    toggle: () => (isOpen ? instance.close() : instance.open()),
  };
  bubble.addEventListener('click', () => instance.toggle());
  window.addEventListener('message', (event) => {
    if (frame && event.source === frame.contentWindow && isFrameMessage(event.data)) instance.close();
  });
  void appearanceOf(base, options.clientId).then((look) => {
    if (look.botName) title = look.botName;
    if (look.color) bubble.style.setProperty('--color', look.color);
    const picture = look.fabImage;
    if (picture) {
      const img = document.createElement('img');
      img.src = picture;
      img.alt = '';
      fab = img.outerHTML;
    }
    render();
  });
  render();
  if (options.open) instance.open();
  return instance;
}

let current: Instance | undefined;

function init(options: InitOptions): Instance {
  const base = (options.baseUrl ?? scriptBase ?? '').replace(/\/+$/, '');
  if (!options.clientId) throw new Error('parley webchat: init needs a clientId');
  if (!base) throw new Error('parley webchat: give init a baseUrl (where Parley is)');
  const mount = () => (options.mode === 'inline' ? mountInline(base, options) : mountBubble(base, options));
  const instance: Instance = {
    open: () => current?.open(),
    close: () => current?.close(),
    toggle: () => current?.toggle(),
  };
  if (document.body) current = mount();
  else document.addEventListener('DOMContentLoaded', () => (current = mount()), { once: true });
  return instance;
}

const api = {
  init,
  open: () => current?.open(),
  close: () => current?.close(),
  toggle: () => current?.toggle(),
};
Object.assign(window, { parley: api });

const data = script?.dataset;
if (data?.clientId) {
  const mode = data.mode === 'inline' ? 'inline' : 'bubble';
  init({
    clientId: data.clientId,
    mode,
    ...(data.target && { target: data.target }),
    ...(data.open === 'true' && { open: true }),
  });
}
