import type { Configuration } from '@botpress/webchat';

/** What the server puts in the page (a JSON script element): the channel's client id and its look. */
export interface PageConfiguration {
  clientId: string;
  configuration: Configuration & { botName: string };
}

/** The id of the element that carries it. */
export const CONFIGURATION_ELEMENT = 'parley-webchat-configuration';

/** What the page inside the embed script's frame tells the page around it. */
export interface FrameMessage {
  source: 'parley-webchat';
  type: 'close';
}

export const isFrameMessage = (value: unknown): value is FrameMessage =>
  typeof value === 'object' &&
  value !== null &&
  Reflect.get(value, 'source') === 'parley-webchat' &&
  Reflect.get(value, 'type') === 'close';
