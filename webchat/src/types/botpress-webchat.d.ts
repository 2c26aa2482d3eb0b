// The part of @botpress/webchat's API the page uses, for the type-checker only (esbuild bundles the real
// package). Its own declarations import the TypeScript sources of @bpinternal/shared, which do not
// compile under this project's strict settings.
import type { CSSProperties, JSX } from 'react';

/** The webchat's `configuration`: the fields a bot's webchat settings give (src/domain/webchat/appearance.ts). */
export interface Configuration {
  botName?: string;
  botAvatar?: string;
  botDescription?: string;
  fabImage?: string;
  color?: string;
  themeMode?: 'light' | 'dark';
  radius?: number;
  variant?: 'solid' | 'soft';
  headerVariant?: 'solid' | 'glass';
  composerPlaceholder?: string;
  footer?: string;
  feedbackEnabled?: boolean;
  allowFileUpload?: boolean;
  soundEnabled?: boolean;
  conversationHistory?: boolean;
}

export interface WebchatProps {
  clientId: string;
  apiUrl?: string;
  storageKey?: string;
  configuration?: Configuration;
  style?: CSSProperties;
  /** Passed on to the chat window: its header then has a close button. */
  closeWindow?: () => void;
}

export declare const Webchat: (props: WebchatProps) => JSX.Element;
