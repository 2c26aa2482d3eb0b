import { ApiError } from '../shared/errors.ts';
import type { Installation } from './installations.ts';

/** An integration handler's answer, relayed to whoever called its webhook. */
export interface HandlerAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A request as an integration's handler takes it (`webhook_received`): its body as text. */
export interface IntegrationRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}

/** What runs installed integrations' handlers, as the domain calls them: the engine implements it. */
export interface IntegrationHost {
  /** `webhook_received`: a request to the installation's webhook; its answer is the sender's. */
  webhook(installation: Installation, request: IntegrationRequest): Promise<HandlerAnswer>;
  /** `create_conversation`: the integration opens a conversation of its channel (and creates it through the API). */
  createConversation(
    installation: Installation,
    channel: string,
    tags: Record<string, string>,
  ): Promise<void>;
  /** `create_user`: the integration makes a user of its service known (and creates it through the API). */
  createUser(installation: Installation, tags: Record<string, string>): Promise<void>;
}

/** Where the engine plugs in what runs integrations (it starts after the domain is built). */
export class IntegrationHostSlot {
  private host: IntegrationHost | undefined;

  use(host: IntegrationHost): void {
    this.host = host;
  }

  get(): IntegrationHost {
    if (!this.host) throw new ApiError('Internal', 'integrations are not run by this server');
    return this.host;
  }
}
