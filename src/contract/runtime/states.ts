import { Type } from 'typebox';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { Expiry, STATE_TYPES, StateSchema } from '../../domain/runtime/states.ts';
import { operation } from './define.ts';

const tag = 'States';
const StateKey = { type: Type.Enum(STATE_TYPES), id: Type.String(), name: Type.String() };
const StateAnswer = Type.Object({ state: StateSchema });
const CachedStateAnswer = Type.Object({ state: StateSchema, meta: Type.Object({ cached: Type.Boolean() }) });
const path = '/states/:type/:id/:name';

export const stateOperations = [
  operation({
    id: 'getState',
    method: 'GET',
    path,
    access: 'read',
    tag,
    summary: 'Get a state',
    params: StateKey,
    response: CachedStateAnswer,
    handler: async (d, actor, key) => ({ state: await d.states.get(actor, key), meta: { cached: false } }),
  }),
  operation({
    id: 'setState',
    method: 'POST',
    path,
    access: 'write',
    tag,
    summary: 'Set a state',
    description: 'A `null` payload deletes the state. The payload is limited to 128 KB.',
    params: StateKey,
    body: { payload: Type.Union([JsonObject, Type.Null()]), expiry: Type.Optional(Expiry) },
    response: StateAnswer,
    handler: async (d, actor, { payload, expiry, ...key }) => ({
      state: await d.states.set(actor, key, payload, expiry),
    }),
  }),
  operation({
    id: 'getOrSetState',
    method: 'POST',
    path: `${path}/get-or-set`,
    access: 'write',
    tag,
    summary: 'Get a state, or set it when it does not exist',
    params: StateKey,
    body: { payload: JsonObject, expiry: Type.Optional(Expiry) },
    response: CachedStateAnswer,
    handler: async (d, actor, { payload, expiry, ...key }) => {
      const { state, cached } = await d.states.getOrSet(actor, key, payload, expiry);
      return { state, meta: { cached } };
    },
  }),
  operation({
    id: 'patchState',
    method: 'PATCH',
    path,
    access: 'write',
    tag,
    summary: 'Patch a state',
    description: 'Shallow merge into the current payload.',
    params: StateKey,
    body: { payload: JsonObject, expiry: Type.Optional(Expiry) },
    response: StateAnswer,
    handler: async (d, actor, { payload, expiry, ...key }) => ({
      state: await d.states.patch(actor, key, payload, expiry),
    }),
  }),
  operation({
    id: 'setStateExpiry',
    method: 'POST',
    path: `${path}/expiry`,
    access: 'write',
    tag,
    summary: 'Set the expiry of a state',
    params: StateKey,
    body: { expiry: Expiry },
    response: StateAnswer,
    handler: async (d, actor, { expiry, ...key }) => ({
      state: await d.states.setExpiry(actor, key, expiry),
    }),
  }),
];
