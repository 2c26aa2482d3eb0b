// The sections of a bot, in tab order. A new API's screens (the bot's files and knowledge bases, its
// tables) are one entry here and one component each.
import type { ComponentType } from 'preact';
import type { Action } from '../../roles.ts';
import type { BotScreenProps } from './screen-props.ts';
import { Overview } from './overview.tsx';
import { Conversations } from './conversations.tsx';
import { Flow } from './flow/lazy-flow.tsx';
import { Logs } from './logs.tsx';
import { TryIt } from './try-it.tsx';
import { Settings } from './settings.tsx';
import { Publish } from './publish/publish.tsx';
import { Versions } from './versions.tsx';
import { Keys } from './keys.tsx';
import { Webhooks } from './webhooks.tsx';

export interface BotSection {
  /** The address segment after /console/bots/{id}/ ('' for the overview). */
  segment: string;
  label: string;
  component: ComponentType<BotScreenProps>;
  /** What the role must be allowed to see the tab (the server answers 403 otherwise). */
  needs?: Action;
}

export const BOT_SECTIONS: BotSection[] = [
  { segment: '', label: 'Overview', component: Overview },
  { segment: 'flow', label: 'Flow', component: Flow },
  { segment: 'conversations', label: 'Conversations', component: Conversations },
  { segment: 'logs', label: 'Logs', component: Logs },
  { segment: 'try', label: 'Try it', component: TryIt },
  { segment: 'publish', label: 'Publish', component: Publish },
  { segment: 'versions', label: 'Versions', component: Versions },
  { segment: 'settings', label: 'Settings', component: Settings },
  { segment: 'webhooks', label: 'Webhooks', component: Webhooks },
  { segment: 'keys', label: 'API keys', component: Keys, needs: 'botKeys.manage' },
];
