import { Type } from 'typebox';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { Model } from '../models.ts';
import { Expiry } from '../../domain/runtime/schemas.ts';
import { operation } from '../operation.ts';
import { STATE_TYPES } from '../../value-sets.ts';

const tag = 'States';
const StateKey = { type: Type.Enum(STATE_TYPES), id: Type.String(), name: Type.String() };
const StateAnswer = Type.Object({ state: Model.State });
const CachedStateAnswer = Type.Object({ state: Model.State, meta: Type.Object({ cached: Type.Boolean() }) });
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
  }),
] as const;
