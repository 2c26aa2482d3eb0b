// The webchat page: the official webchat, full page (the share link) or inside the embed script's frame.
import { Webchat } from '@botpress/webchat';
import type { WebchatProps } from '@botpress/webchat';
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { PREVIEW_PARAM, previewLookOf } from '../../src/contract/webchat/pages.ts';
import type { PreviewReadyMessage } from '../../src/contract/webchat/pages.ts';
import { CONFIGURATION_ELEMENT } from './config.ts';
import type { FrameMessage, PageConfiguration } from './config.ts';
import './page.css';

const element = document.getElementById(CONFIGURATION_ELEMENT);
const root = document.getElementById('root');
if (!element?.textContent || !root) throw new Error('the page carries no webchat configuration');
const { clientId, configuration } = JSON.parse(element.textContent) as PageConfiguration;

// The page is `{base}/s/{clientId}`: the webchat API is `{base}/webchat`, whatever the base's path.
const apiUrl = new URL('../webchat', window.location.href).href;
const query = new URLSearchParams(window.location.search);
const embedded = query.has('embedded');
/** Framed by the console: shows the look the console sends (see contract/webchat/pages.ts). */
const preview = query.has(PREVIEW_PARAM) && window.parent !== window;

/** Inside the embed script's frame, the header's close button closes the frame. */
const close = () => {
  const message: FrameMessage = { source: 'parley-webchat', type: 'close' };
  window.parent.postMessage(message, '*');
};

// `closeWindow` reaches the chat window through <Webchat>'s other props (its own types do not list it).
const props: WebchatProps = {
  clientId,
  apiUrl,
  configuration,
  storageKey: `parley-webchat-${clientId}`,
  ...(embedded && { closeWindow: close }),
  style: { width: '100%', height: '100%' },
};

/** The chat; in a preview, with the look its console sends over the saved one (an empty field: the saved). */
function Chat() {
  const [look, setLook] = useState<Partial<PageConfiguration['configuration']>>({});
  useEffect(() => {
    if (!preview) return undefined;
    const onMessage = (event: MessageEvent) => {
      // Only the console that frames the page, of the page's own origin.
      if (event.source !== window.parent || event.origin !== window.location.origin) return;
      const next = previewLookOf(event.data);
      if (!next) return;
      setLook(Object.fromEntries(Object.entries(next).filter(([, value]) => value !== '')));
      document.title = next.botName || configuration.botName;
    };
    window.addEventListener('message', onMessage);
    const ready: PreviewReadyMessage = { source: 'parley-webchat', type: 'preview-ready' };
    window.parent.postMessage(ready, window.location.origin);
    return () => window.removeEventListener('message', onMessage);
  }, []);
  return <Webchat {...props} configuration={{ ...configuration, ...look }} />;
}

document.title = configuration.botName;
createRoot(root).render(
  <StrictMode>
    <Chat />
  </StrictMode>,
);
