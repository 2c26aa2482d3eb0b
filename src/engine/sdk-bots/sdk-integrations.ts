/**
 * Runs integrations built with `@botpress/sdk` (what `bp deploy` uploads from an integration project),
 * one process per installation on a bot, called with the hosted platform's integration contract:
 * `register`/`unregister` when a bot installs or removes it, `webhook_received` for requests to its
 * webhook (answered synchronously), `message_created` for the bot's messages in its conversations,
 * `action_triggered` for `<integration>:<action>` calls.
 */
import { HEADERS } from '../../contract/headers.ts';
import { codeVersion } from '../../domain/bots/bot-code.ts';
import type { Domain } from '../../domain/index.ts';
import type { ChannelSendOutcome, ClaimedChannelSend } from '../../domain/integrations/channel-sends.ts';
import type { Installation, InstallationChanges } from '../../domain/integrations/installations.ts';
import type { RuntimeIntegration } from '../../domain/integrations/integrations.ts';
import type { ResolvedAction } from '../../domain/runtime/actions.ts';
import { ApiError } from '../../domain/shared/errors.ts';
import { isJsonObject } from '../../domain/shared/json.ts';
import type { Json, JsonObject } from '../../domain/shared/json.ts';
import type { HandlerAnswer, IntegrationHost, IntegrationRequest } from '../../domain/integrations/host.ts';
import type { BotActor } from '../../domain/workspace/actors.ts';
import { reasonOf } from '../failures.ts';
import { unlessMissing } from '../../domain/shared/errors.ts';
import type { BundleResponse } from './bot-process.ts';
import {
  BundleCallFailure,
  bundleRequest,
  errorOf,
  invocationHeaders,
  callError,
  secretsEnv,
} from './bundle-host.ts';
import type { BundleHost, Hosted } from './bundle-host.ts';

/** An integration's definition and bundle file, read once per deploy of it. */
interface Loaded {
  updatedAt: string;
  integration: Omit<RuntimeIntegration, 'code'>;
  versionId: string;
  bundleFile: string;
}

export class SdkIntegrations implements IntegrationHost {
  private readonly loaded = new Map<string, Loaded>();

  constructor(
    private readonly domain: Domain,
    private readonly host: BundleHost,
  ) {}

  /** Installations added or changed are sent `register`, removed ones `unregister`; what they answer is logged. */
  async changed(changes: InstallationChanges): Promise<void> {
    await Promise.all([
      ...changes.registered.map((installation) => this.register(installation, 'register')),
      ...changes.unregistered.map((installation) => this.register(installation, 'unregister')),
    ]);
  }

  /** A request to the installation's webhook, handed to its handler; its answer is the sender's. */
  async webhook(installation: Installation, request: IntegrationRequest): Promise<HandlerAnswer> {
    const unit = await this.unitOf(installation);
    if (!unit)
      throw new ApiError(
        'ResourceNotFound',
        `The integration of webhook ${installation.webhookId} has no code`,
      );
    try {
      const response = await this.host.call(
        unit.hosted,
        bundleRequest(this.headers(unit, installation, 'webhook_received'), JSON.stringify({ req: request })),
      );
      return { ...response, status: validStatus(response.status) };
    } catch (err) {
      this.host.botLog(installation.botId, {
        level: 'error',
        message: `${unit.hosted.logPrefix}a webhook request failed: ${reasonOf(err)}`,
      });
      throw callError(err, `The integration ${installation.integrationName} did not answer`, 'Internal');
    }
  }

  createConversation(
    installation: Installation,
    channel: string,
    tags: Record<string, string>,
  ): Promise<void> {
    return this.create(installation, 'create_conversation', { channel, tags });
  }

  createUser(installation: Installation, tags: Record<string, string>): Promise<void> {
    return this.create(installation, 'create_user', { tags });
  }

  /** Asks the integration to create a conversation or user (it creates it through the API as itself). */
  private async create(installation: Installation, operation: string, body: JsonObject): Promise<void> {
    const unit = await this.unitOf(installation);
    if (!unit) throw new ApiError('Runtime', `The integration ${installation.integrationName} has no code`);
    try {
      await this.host.invoke(
        unit.hosted,
        bundleRequest(this.headers(unit, installation, operation), JSON.stringify(body)),
      );
    } catch (err) {
      throw callError(
        err,
        `The integration ${installation.integrationName} could not create it (${operation})`,
      );
    }
  }

  /** `<alias>:<action>`: an action of the integration the bot installed under that alias. */
  async action(actor: BotActor, alias: string, name: string): Promise<ResolvedAction | undefined> {
    const installation = await this.domain.installations.byAlias(actor.botId, alias);
    if (!installation?.enabled) return undefined;
    const unit = await this.unitOf(installation);
    const definition = unit?.loaded.integration.actions[name];
    if (!unit || !definition) return undefined;
    return {
      versionId: unit.hosted.versionId,
      input: schemaOf(definition.input),
      output: schemaOf(definition.output),
      run: (input) => this.runAction(unit, installation, name, input),
    };
  }

  /** A bot's message in a conversation of the integration, handed to the channel's handler. */
  async sendToChannel(send: ClaimedChannelSend): Promise<ChannelSendOutcome> {
    const installation =
      send.alias === null ? undefined : await this.domain.installations.byAlias(send.botId, send.alias);
    if (!installation?.enabled) return { failed: 'the integration is no longer installed and enabled' };
    const unit = await this.unitOf(installation);
    if (!unit) return { failed: 'the integration has no code' };
    const actor: BotActor = { botId: send.botId, workspaceId: installation.workspaceId };
    const message = await unlessMissing(this.domain.messages.get(actor, send.messageId));
    const conversation =
      message && (await unlessMissing(this.domain.conversations.get(actor, message.conversationId)));
    if (!message || !conversation) return { failed: 'the message or its conversation was deleted' };
    // The bot wrote it: the bot is its user, as the hosted platform's bot user is.
    const user =
      message.userId === send.botId
        ? {
            id: send.botId,
            createdAt: message.createdAt,
            updatedAt: message.createdAt,
            tags: {},
          }
        : await unlessMissing(this.domain.users.get(actor, message.userId));
    const body = { type: message.type, payload: message.payload, conversation, user, message };
    try {
      const response = await this.host.call(
        unit.hosted,
        bundleRequest(
          this.headers(unit, installation, 'message_created', message.type),
          JSON.stringify(body),
        ),
      );
      if (response.status < 300) return 'delivered';
      const reason = `the integration answered ${response.status}: ${errorOf(response)}`;
      this.logFailure(unit, installation, `message ${message.id} was not sent: ${reason}`);
      return refusedForGood(response) ? { failed: reason } : { retry: reason };
    } catch (err) {
      const reason = reasonOf(err);
      this.logFailure(unit, installation, `message ${message.id} was not sent: ${reason}`);
      return err instanceof BundleCallFailure ? { failed: reason } : { retry: reason };
    }
  }

  private async register(installation: Installation, operation: 'register' | 'unregister'): Promise<void> {
    let unit: Unit | undefined;
    try {
      unit = await this.unitOf(installation);
      if (!unit || this.host.isClosed) return;
      const webhookUrl = this.domain.links.webhookUrl(installation.webhookId);
      await this.host.invoke(
        unit.hosted,
        bundleRequest(this.headers(unit, installation, operation), JSON.stringify({ webhookUrl })),
      );
      this.host.botLog(installation.botId, {
        level: 'info',
        message: `${unit.hosted.logPrefix}${operation === 'register' ? 'registered' : 'unregistered'}`,
      });
      if (operation === 'register')
        await this.domain.installations.setStatus(installation, 'registered', null);
    } catch (err) {
      const reason = reasonOf(err);
      this.host.botLog(installation.botId, {
        level: 'error',
        message: `${unit?.hosted.logPrefix ?? ''}${operation} failed: ${reason}`,
      });
      if (operation === 'register')
        await this.domain.installations
          .setStatus(installation, 'registration_failed', reason)
          .catch(() => undefined);
    }
  }

  private runAction(
    unit: Unit,
    installation: Installation,
    name: string,
    input: JsonObject,
  ): Promise<JsonObject> {
    const headers = this.headers(unit, installation, 'action_triggered');
    return this.host.runAction(unit.hosted, headers, name, input, `${installation.alias}:${name}`);
  }

  private headers(
    unit: Unit,
    installation: Installation,
    operation: string,
    type = operation,
  ): Record<string, string> {
    return {
      ...invocationHeaders({
        botId: installation.botId,
        operation,
        type,
        configuration: installation.configuration,
      }),
      'x-bot-user-id': installation.botId,
      [HEADERS.integrationId]: installation.integrationId,
      [HEADERS.integrationAlias]: installation.alias,
      'x-webhook-id': installation.webhookId,
      'x-bp-configuration-type': installation.configurationType ?? '',
      'x-bp-signing-secret': unit.loaded.integration.signingSecret,
    };
  }

  private logFailure(unit: Unit, installation: Installation, message: string): void {
    this.host.botLog(installation.botId, { level: 'error', message: `${unit.hosted.logPrefix}${message}` });
  }

  /** The installation's process, as the bundle host runs it; undefined for an integration without code. */
  private async unitOf(installation: Installation): Promise<Unit | undefined> {
    const loaded = await this.load(installation.integrationId);
    if (!loaded) return undefined;
    const { integration } = loaded;
    const hosted: Hosted = {
      // One process per installation: two aliases of one integration are two processes, each its own key.
      key: `${installation.botId}/${installation.alias}`,
      botId: installation.botId,
      workspaceId: installation.workspaceId,
      integration: { id: integration.id, alias: installation.alias },
      versionId: loaded.versionId,
      bundleFile: loaded.bundleFile,
      env: {
        BP_BOT_ID: installation.botId,
        BP_INTEGRATION_ID: integration.id,
        ...secretsEnv(integration.secrets),
      },
      logPrefix: `[${installation.alias}] `,
    };
    return { loaded, hosted };
  }

  private async load(integrationId: string): Promise<Loaded | undefined> {
    const updatedAt = await this.domain.integrations.updatedAt(integrationId);
    if (updatedAt === undefined) return undefined;
    const hit = this.loaded.get(integrationId);
    if (hit && hit.updatedAt === updatedAt) return hit;
    const runtime = await this.domain.integrations.forRuntime(integrationId);
    if (!runtime) return undefined;
    const { code, ...integration } = runtime;
    const versionId = codeVersion(integrationId, code);
    const loaded: Loaded = {
      updatedAt: runtime.updatedAt,
      integration,
      versionId,
      bundleFile: await this.host.writeBundle(integrationId, versionId, code),
    };
    this.loaded.set(integrationId, loaded);
    return loaded;
  }
}

/**
 * Whether a channel's handler refused a message for good: a 4xx other than `Runtime`. A handler that
 * throws answers 400 `Runtime` in SDK 0.10 (a 500 in later SDKs), whatever failed (often the service
 * it sends to): that is tried again, as a 5xx is.
 */
function refusedForGood(response: BundleResponse): boolean {
  if (response.status >= 500 || response.status < 400) return false;
  try {
    const parsed: unknown = JSON.parse(response.body);
    return !(typeof parsed === 'object' && parsed !== null && 'type' in parsed && parsed.type === 'Runtime');
  } catch {
    return true;
  }
}

interface Unit {
  loaded: Loaded;
  hosted: Hosted;
}

/** A handler's status as the sender gets it: one HTTP can carry, else a 502 (the handler answered nonsense). */
function validStatus(status: number): number {
  return Number.isInteger(status) && status >= 200 && status <= 599 ? status : 502;
}

/** An action's input or output schema as a definition holds it: `{ schema }`. */
function schemaOf(part: Json | undefined): JsonObject {
  return isJsonObject(part) && isJsonObject(part.schema) ? part.schema : {};
}
