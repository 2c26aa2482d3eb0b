// The webchat page: the official webchat, full page (the share link) or inside the embed script's frame.
import { Webchat } from '@botpress/webchat';
import type { WebchatProps } from '@botpress/webchat';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { CONFIGURATION_ELEMENT } from './config.ts';
import type { FrameMessage, PageConfiguration } from './config.ts';
import './page.css';

const element = document.getElementById(CONFIGURATION_ELEMENT);
const root = document.getElementById('root');
if (!element?.textContent || !root) throw new Error('the page carries no webchat configuration');
const { clientId, configuration } = JSON.parse(element.textContent) as PageConfiguration;

// The page is `{base}/s/{clientId}`: the webchat API is `{base}/webchat`, whatever the base's path.
const apiUrl = new URL('../webchat', window.location.href).href;
const embedded = new URLSearchParams(window.location.search).has('embedded');

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

document.title = configuration.botName;
createRoot(root).render(
  <StrictMode>
    <Webchat {...props} />
  </StrictMode>,
);
