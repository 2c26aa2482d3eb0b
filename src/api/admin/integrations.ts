import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateIntegrationBodySchema,
  IntegrationSchema,
  UpdateIntegrationBodySchema,
} from '../../domain/integrations/integrations.ts';
import { ApiError } from '../../domain/shared/errors.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Integrations'];
const IntegrationResponse = Type.Object({ integration: IntegrationSchema });
const NameParams = Type.Object({ name: Type.String(), version: Type.String() });
const List = Type.Object({ integrations: Type.Array(IntegrationSchema), meta: Type.Object({}) });

/** Why the hub answers nothing: what a user who looked for an integration there should do instead. */
const notInHub = (what: string) =>
  new ApiError(
    'ResourceNotFound',
    `Integration "${what}" is not in the hub: Parley has no hub of public integrations. Deploy the integration to your workspace with \`bp deploy\` in its project`,
  );

/**
 * The integrations a workspace deployed (`bp deploy` in an integration project), and the hub routes
 * the CLI looks in when a workspace has no integration of a name: they find nothing here.
 */
export const integrationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { integrations } = app.domain;

  app.post(
    '/integrations',
    {
      schema: {
        operationId: 'createIntegration',
        summary: 'Deploy a version of an integration to the workspace (what `bp deploy` sends)',
        tags,
        body: CreateIntegrationBodySchema,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => ({
      integration: await integrations.create(workspaceActorOf(request), request.body),
    }),
  );

  app.get(
    '/integrations',
    {
      schema: {
        operationId: 'listIntegrations',
        summary: 'List the integrations deployed to the workspace (newest first, at most 100)',
        tags,
        querystring: Type.Object({
          name: Type.Optional(Type.String()),
          version: Type.Optional(Type.String()),
          nextToken: Type.Optional(Type.String()),
          pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        }),
        response: { 200: List, ...errorResponses },
      },
    },
    async (request) => ({
      integrations: await integrations.list(workspaceActorOf(request), request.query),
      meta: {},
    }),
  );

  app.get(
    '/integrations/:id',
    {
      schema: {
        operationId: 'getIntegration',
        summary: 'Get an integration of the workspace',
        tags,
        params: IdParams,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => ({
      integration: await integrations.get(workspaceActorOf(request), request.params.id),
    }),
  );

  app.get(
    '/integrations/:name/:version',
    {
      schema: {
        operationId: 'getIntegrationByName',
        summary: 'Get an integration of the workspace by its name and version',
        tags,
        params: NameParams,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => ({
      integration: await integrations.getByName(
        workspaceActorOf(request),
        request.params.name,
        request.params.version,
      ),
    }),
  );

  app.put(
    '/integrations/:id',
    {
      schema: {
        operationId: 'updateIntegration',
        summary: 'Update an integration: its definition, its code, its secrets (null removes one)',
        tags,
        params: IdParams,
        body: UpdateIntegrationBodySchema,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => ({
      integration: await integrations.update(workspaceActorOf(request), request.params.id, request.body),
    }),
  );

  app.delete(
    '/integrations/:id',
    {
      schema: {
        operationId: 'deleteIntegration',
        summary: 'Delete an integration no bot has installed',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await integrations.delete(workspaceActorOf(request), request.params.id);
      return {};
    },
  );

  app.post(
    '/integrations/:id/signing-secrets/rotate',
    {
      schema: {
        operationId: 'rotateIntegrationSigningSecrets',
        summary: 'Replace the secret that signs the requests handed to an integration',
        tags,
        params: IdParams,
        response: { 200: Type.Object({ newSigningSecret: Type.String() }), ...errorResponses },
      },
    },
    async (request) => ({
      newSigningSecret: await integrations.rotateSigningSecret(workspaceActorOf(request), request.params.id),
    }),
  );

  app.get(
    '/hub/integrations',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'listPublicIntegrations',
        summary: 'List the hub’s integrations: none (Parley has no hub)',
        tags,
        querystring: Type.Object({ nextToken: Type.Optional(Type.String()) }),
        response: { 200: List, ...errorResponses },
      },
    },
    async () => ({ integrations: [], meta: {} }),
  );

  app.get(
    '/hub/integrations/:id',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'getPublicIntegrationById',
        summary: 'Get a hub integration: not found (Parley has no hub)',
        tags,
        params: IdParams,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => {
      throw notInHub(request.params.id);
    },
  );

  app.get(
    '/hub/integrations/:name/:version',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'getPublicIntegration',
        summary: 'Get a hub integration by name and version: not found (Parley has no hub)',
        tags,
        params: NameParams,
        response: { 200: IntegrationResponse, ...errorResponses },
      },
    },
    async (request) => {
      throw notInHub(`${request.params.name}@${request.params.version}`);
    },
  );
};
