import type { ChatScope } from '../../domain/chat/chat.ts';
import type { WebchatAppearance } from '../../domain/webchat/appearance.ts';

/** What a page needs to show a bot's webchat: its client id and its look (the bot's name by default). */
export interface WebchatPageConfiguration {
  clientId: string;
  configuration: WebchatAppearance & { botName: string };
}

/** The channel's webchat settings as the official webchat takes them; uploads only where files can go. */
export function webchatConfiguration(scope: ChatScope, uploadsAvailable: boolean): WebchatPageConfiguration {
  const { channel } = scope;
  return {
    clientId: channel.webhookId,
    configuration: {
      ...channel.webchat,
      botName: channel.webchat.botName ?? channel.botName,
      allowFileUpload: uploadsAvailable && (channel.webchat.allowFileUpload ?? false),
    },
  };
}
