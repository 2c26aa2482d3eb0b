import { createAjv } from '../domain/json-schema.ts';
import type { ValidateFunction } from 'ajv';
import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';
import type { BotActor } from '../domain/actors.ts';
import {
  CreateConversationBodySchema,
  GetOrCreateConversationBodySchema,
  UpdateConversationBodySchema,
} from '../domain/conversations.ts';
import { invalidPayload } from '../domain/errors.ts';
import { CreateEventBodySchema } from '../domain/events.ts';
import type { Domain } from '../domain/index.ts';
import { CreateMessageBodySchema, UpdateMessageBodySchema } from '../domain/messages.ts';
import { JsonObject } from '../domain/schemas.ts';
import { Expiry, STATE_TYPES } from '../domain/states.ts';
import { CreateUserBodySchema, GetOrCreateUserBodySchema, UpdateUserBodySchema } from '../domain/users.ts';
import { CreateWorkflowBodySchema, UpdateWorkflowBodySchema } from '../domain/workflows.ts';
import type { HostCall, HostHandler, Json } from './sandbox/types.ts';

const ajv = createAjv();
const Id = Type.Object({ id: Type.String() });
const StateKey = { type: Type.Enum(STATE_TYPES), id: Type.String(), name: Type.String() };
const Page = {
  nextToken: Type.Optional(Type.String()),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

type Operation = (actor: BotActor, args: never) => Promise<unknown>;

/** One operation of the in-process client: its arguments' schema and what it does. */
function op<S extends TSchema>(schema: S, run: (actor: BotActor, args: Static<S>) => Promise<unknown>) {
  const check: ValidateFunction = ajv.compile(schema);
  return { check, run: run as Operation };
}

const withId = <S extends TSchema>(schema: S) => Type.Intersect([Id, schema]);

/** Answers a bot's `actions.<alias>.<action>(input)` and `client.callAction`, through the action service. */
export type ActionCaller = (
  actor: BotActor,
  type: string,
  input: Record<string, unknown>,
) => Promise<unknown>;

/**
 * The `client` bot code gets: the Runtime API's operations, with its argument shapes and answers, run
 * in-process through the same domain services (so the same rules), as the bot.
 */
export function runtimeOperations(domain: Domain, callAction: ActionCaller) {
  const { conversations, users, messages, events, states, workflows, analytics } = domain;
  return {
    createConversation: op(CreateConversationBodySchema, async (a, b) => ({
      conversation: await conversations.create(a, b, undefined),
    })),
    getOrCreateConversation: op(GetOrCreateConversationBodySchema, async (a, b) => {
      const { conversation, created } = await conversations.getOrCreate(a, b, undefined);
      return { conversation, meta: { created } };
    }),
    getConversation: op(Id, async (a, { id }) => ({ conversation: await conversations.get(a, id) })),
    listConversations: op(
      Type.Object({ ...Page, tags: Type.Optional(Type.Record(Type.String(), Type.String())) }),
      async (a, q) => {
        const page = await conversations.list(a, q);
        return { conversations: page.items, meta: { nextToken: page.nextToken } };
      },
    ),
    updateConversation: op(withId(UpdateConversationBodySchema), async (a, { id, ...b }) => ({
      conversation: await conversations.update(a, id, b),
    })),
    listParticipants: op(Type.Object({ id: Type.String(), ...Page }), async (a, { id, ...q }) => {
      const page = await conversations.listParticipants(a, id, q);
      return { participants: page.items, meta: { nextToken: page.nextToken } };
    }),
    addParticipant: op(
      Type.Object({ id: Type.String(), userId: Type.String() }),
      async (a, { id, userId }) => ({
        participant: await conversations.addParticipant(a, id, userId),
      }),
    ),
    createUser: op(CreateUserBodySchema, async (a, b) => ({ user: await users.create(a, b) })),
    getOrCreateUser: op(GetOrCreateUserBodySchema, async (a, b) => {
      const { user, created } = await users.getOrCreate(a, b);
      return { user, meta: { created } };
    }),
    getUser: op(Id, async (a, { id }) => ({ user: await users.get(a, id) })),
    updateUser: op(withId(UpdateUserBodySchema), async (a, { id, ...b }) => ({
      user: await users.update(a, id, b),
    })),
    listUsers: op(Type.Object({ ...Page, conversationId: Type.Optional(Type.String()) }), async (a, q) => {
      const page = await users.list(a, q);
      return { users: page.items, meta: { nextToken: page.nextToken } };
    }),
    createMessage: op(CreateMessageBodySchema, async (a, b) => ({ message: await messages.create(a, b) })),
    getMessage: op(Id, async (a, { id }) => ({ message: await messages.get(a, id) })),
    updateMessage: op(withId(UpdateMessageBodySchema), async (a, { id, ...b }) => ({
      message: await messages.update(a, id, b),
    })),
    deleteMessage: op(Id, async (a, { id }) => {
      await messages.delete(a, id);
      return {};
    }),
    listMessages: op(Type.Object({ ...Page, conversationId: Type.Optional(Type.String()) }), async (a, q) => {
      const page = await messages.list(a, q);
      return { messages: page.items, meta: { nextToken: page.nextToken } };
    }),
    createEvent: op(CreateEventBodySchema, async (a, b) => ({ event: await events.create(a, b) })),
    getEvent: op(Id, async (a, { id }) => ({ event: await events.get(a, id) })),
    listEvents: op(
      Type.Object({
        ...Page,
        type: Type.Optional(Type.String()),
        conversationId: Type.Optional(Type.String()),
      }),
      async (a, q) => {
        const page = await events.list(a, q);
        return { events: page.items, meta: { nextToken: page.nextToken } };
      },
    ),
    getState: op(Type.Object(StateKey), async (a, key) => ({
      state: await states.get(a, key),
      meta: { cached: false },
    })),
    setState: op(
      Type.Object({
        ...StateKey,
        payload: Type.Union([JsonObject, Type.Null()]),
        expiry: Type.Optional(Expiry),
      }),
      async (a, { payload, expiry, ...key }) => ({ state: await states.set(a, key, payload, expiry) }),
    ),
    getOrSetState: op(
      Type.Object({ ...StateKey, payload: JsonObject, expiry: Type.Optional(Expiry) }),
      async (a, { payload, expiry, ...key }) => {
        const { state, cached } = await states.getOrSet(a, key, payload, expiry);
        return { state, meta: { cached } };
      },
    ),
    patchState: op(
      Type.Object({ ...StateKey, payload: JsonObject, expiry: Type.Optional(Expiry) }),
      async (a, { payload, expiry, ...key }) => ({ state: await states.patch(a, key, payload, expiry) }),
    ),
    createWorkflow: op(CreateWorkflowBodySchema, async (a, b) => ({
      workflow: await workflows.create(a, b),
    })),
    getWorkflow: op(Id, async (a, { id }) => ({ workflow: await workflows.get(a, id) })),
    updateWorkflow: op(withId(UpdateWorkflowBodySchema), async (a, { id, ...b }) => ({
      workflow: await workflows.update(a, id, b),
    })),
    trackAnalytics: op(Type.Object({ name: Type.String(), count: Type.Integer() }), async (a, b) => {
      await analytics.track(a, b.name, b.count);
      return {};
    }),
    callAction: op(
      Type.Object({ type: Type.String({ minLength: 1, maxLength: 200 }), input: JsonObject }),
      async (a, b) => ({
        output: await callAction(a, b.type, b.input),
        meta: { cached: false },
      }),
    ),
  };
}

export type RuntimeOperations = ReturnType<typeof runtimeOperations>;

/** The host side of bot code's `client` and `actions`: every call runs as this bot. */
export function hostHandler(
  operations: RuntimeOperations,
  actor: BotActor,
  callAction: ActionCaller,
): HostHandler {
  return async (call: HostCall): Promise<Json> => {
    if (call.target === 'action') {
      const input = (call.input ?? {}) as Record<string, unknown>;
      return (await callAction(actor, `${call.alias}:${call.action}`, input)) as Json;
    }
    const operation = (operations as Record<string, { check: ValidateFunction; run: Operation }>)[
      call.operation
    ];
    if (!operation) throw invalidPayload(`client.${call.operation} is not available to bot code`);
    const args = call.args ?? {};
    if (!operation.check(args)) {
      const error = operation.check.errors?.[0];
      throw invalidPayload(
        `client.${call.operation}: ${error?.instancePath || 'arguments'} ${error?.message ?? 'are invalid'}`,
      );
    }
    // client.callAction runs in the caller's context too (a turn's event and variables), like actions.<alias>.<name>.
    const answer =
      call.operation === 'callAction'
        ? {
            output: await callAction(
              actor,
              (args as { type: string }).type,
              (args as { input: Record<string, unknown> }).input,
            ),
            meta: { cached: false },
          }
        : await operation.run(actor, args as never);
    // Answers cross into the sandbox as JSON.
    return JSON.parse(JSON.stringify(answer)) as Json;
  };
}
