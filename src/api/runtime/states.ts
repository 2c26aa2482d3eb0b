import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Expiry, STATE_TYPES, StateSchema } from '../../domain/states.ts';
import { JsonObject } from '../../domain/schemas.ts';
import { botActorOf } from '../auth.ts';
import { errorResponses } from '../common.ts';

const tags = ['States'];
const StateParams = Type.Object({ type: Type.Enum(STATE_TYPES), id: Type.String(), name: Type.String() });
const StateResponse = Type.Object({ state: StateSchema });
const CachedStateResponse = Type.Object({
  state: StateSchema,
  meta: Type.Object({ cached: Type.Boolean() }),
});

export const stateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { states } = app.domain;

  app.get(
    '/states/:type/:id/:name',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getState',
        tags,
        params: StateParams,
        response: { 200: CachedStateResponse, ...errorResponses },
      },
    },
    async (request) => ({
      state: await states.get(botActorOf(request), request.params),
      meta: { cached: false },
    }),
  );

  app.post(
    '/states/:type/:id/:name',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'setState',
        tags,
        description: 'A `null` payload deletes the state. The payload is limited to 128 KB.',
        params: StateParams,
        body: Type.Object({ payload: Type.Union([JsonObject, Type.Null()]), expiry: Type.Optional(Expiry) }),
        response: { 200: StateResponse, ...errorResponses },
      },
    },
    async (request) => ({
      state: await states.set(botActorOf(request), request.params, request.body.payload, request.body.expiry),
    }),
  );

  app.post(
    '/states/:type/:id/:name/get-or-set',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getOrSetState',
        tags,
        params: StateParams,
        body: Type.Object({ payload: JsonObject, expiry: Type.Optional(Expiry) }),
        response: { 200: CachedStateResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { state, cached } = await states.getOrSet(
        botActorOf(request),
        request.params,
        request.body.payload,
        request.body.expiry,
      );
      return { state, meta: { cached } };
    },
  );

  app.patch(
    '/states/:type/:id/:name',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'patchState',
        tags,
        description: 'Shallow merge into the current payload.',
        params: StateParams,
        body: Type.Object({ payload: JsonObject, expiry: Type.Optional(Expiry) }),
        response: { 200: StateResponse, ...errorResponses },
      },
    },
    async (request) => ({
      state: await states.patch(
        botActorOf(request),
        request.params,
        request.body.payload,
        request.body.expiry,
      ),
    }),
  );

  app.post(
    '/states/:type/:id/:name/expiry',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'setStateExpiry',
        tags,
        params: StateParams,
        body: Type.Object({ expiry: Expiry }),
        response: { 200: StateResponse, ...errorResponses },
      },
    },
    async (request) => ({
      state: await states.setExpiry(botActorOf(request), request.params, request.body.expiry),
    }),
  );
};
