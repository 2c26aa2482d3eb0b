import type { ValidateFunction } from 'ajv';
import type { Operation } from '../handlers/operation.ts';
import { BOT_HANDLERS } from '../handlers/bot-operations.ts';
import { jsonValidator, serializerFor } from '../handlers/validation.ts';
import type { Domain } from '../domain/index.ts';
import { invalidPayload } from '../domain/shared/errors.ts';
import type { BotActor, NestedCalls } from '../domain/workspace/actors.ts';
import type { HostCall, HostHandler, Json } from './sandbox/types.ts';
import type { BotFetch } from './bot-fetch.ts';

interface Compiled {
  operation: Operation<BotActor>;
  validate: ValidateFunction;
  serialize: (value: unknown) => string;
}

/**
 * The `client` bot code gets: the Runtime API's operation table, run in-process as the bot. Arguments
 * are checked against each operation's schema and answers written by its serializer, as over HTTP, so
 * bot code and HTTP callers get the same answers and the same errors.
 */
export class BotClient {
  private readonly operations: Map<string, Operation<BotActor>>;
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly domain: Domain,
    /** Bot code's `fetch`; undefined: bot code has none (it is refused). */
    private readonly fetcher?: BotFetch,
    operations: readonly Operation<BotActor>[] = BOT_HANDLERS,
  ) {
    this.operations = new Map(operations.map((op) => [op.id, op]));
  }

  /** `client.<operation>(args)` as `actor`: the operation's answer, as JSON. */
  async call(actor: BotActor, operation: string, args: Json): Promise<Json> {
    const { operation: op, validate, serialize } = this.compile(operation);
    const input = args ?? {};
    if (typeof input !== 'object' || Array.isArray(input)) {
      throw invalidPayload(`client.${operation}: the arguments must be an object`);
    }
    if (!validate(input)) {
      const error = validate.errors?.[0];
      throw invalidPayload(
        `client.${operation}: ${error?.instancePath || 'arguments'} ${error?.message ?? 'are invalid'}`,
      );
    }
    const answer = await op.run(this.domain, actor, input);
    // Answers cross into the sandbox as JSON, written as the HTTP route writes them.
    return JSON.parse(serialize(answer)) as Json;
  }

  /**
   * The host side of bot code's `client`, `actions` and `fetch`: every call runs as `actor`, within the
   * bounds of `calls` (an action it calls is charged to that chain; nothing is served once its call has
   * answered), and each call of bot code has only so many requests of `fetch` in flight at once.
   */
  handler(actor: BotActor, calls: NestedCalls): HostHandler {
    const fetches = { count: 0 };
    return async (call: HostCall): Promise<Json> => {
      calls.check();
      if (call.target === 'fetch') {
        if (!this.fetcher) throw new Error('fetch is not available to this code');
        return this.fetcher.fetch(call.request, fetches);
      }
      if (call.target === 'client') {
        const caller = call.operation === 'callAction' ? { ...actor, calls: calls.nested() } : actor;
        return this.call(caller, call.operation, call.args);
      }
      const answer = await this.call({ ...actor, calls: calls.nested() }, 'callAction', {
        type: `${call.alias}:${call.action}`,
        input: call.input ?? {},
      });
      // `actions.<alias>.<action>(input)` answers the action's output.
      return typeof answer === 'object' && answer !== null && !Array.isArray(answer)
        ? (answer.output ?? null)
        : null;
    };
  }

  private compile(id: string): Compiled {
    let compiled = this.compiled.get(id);
    if (!compiled) {
      const operation = this.operations.get(id);
      if (!operation) throw invalidPayload(`client.${id} is not available to bot code`);
      compiled = {
        operation,
        validate: jsonValidator(operation.input),
        serialize: serializerFor(operation.response),
      };
      this.compiled.set(id, compiled);
    }
    return compiled;
  }
}
