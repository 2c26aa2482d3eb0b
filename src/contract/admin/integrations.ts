import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreateIntegrationBodySchema,
  UpdateIntegrationBodySchema,
} from '../../domain/integrations/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Integrations';
const IntegrationAnswer = Type.Object({ integration: Model.Integration });
/** A name and a version: exact, `latest` or a range (`>=2.0.0 <3.0.0`), which finds the highest it accepts. */
export const NameParams = { name: Type.String(), version: Type.String() };

/** The integrations a workspace deployed (`bp deploy` in an integration project). */
export const integrationOperations = [
  operation({
    id: 'createIntegration',
    method: 'POST',
    path: '/integrations',
    access: 'write',
    tag,
    summary: 'Deploy a version of an integration to the workspace (what `bp deploy` sends)',
    body: CreateIntegrationBodySchema.properties,
    response: IntegrationAnswer,
  }),
  listOperation({
    id: 'listIntegrations',
    path: '/integrations',
    tag,
    summary: 'List the integrations deployed to the workspace, newest first',
    query: { name: Type.Optional(Type.String()), version: Type.Optional(Type.String()) },
    key: 'integrations',
    item: Model.Integration,
  }),
  operation({
    id: 'getIntegration',
    method: 'GET',
    path: '/integrations/:id',
    access: 'read',
    tag,
    summary: 'Get an integration of the workspace, or a built-in',
    params: IdParam,
    response: IntegrationAnswer,
  }),
  operation({
    id: 'getIntegrationByName',
    method: 'GET',
    path: '/integrations/:name/:version',
    access: 'read',
    tag,
    summary:
      'Get an integration of the workspace, or a built-in, by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: IntegrationAnswer,
  }),
  operation({
    id: 'updateIntegration',
    method: 'PUT',
    path: '/integrations/:id',
    access: 'write',
    tag,
    summary: 'Update an integration: its definition, its code, its secrets (null removes one)',
    params: IdParam,
    body: UpdateIntegrationBodySchema.properties,
    response: IntegrationAnswer,
  }),
  operation({
    id: 'deleteIntegration',
    method: 'DELETE',
    path: '/integrations/:id',
    access: 'write',
    tag,
    summary: 'Delete an integration no bot has installed',
    params: IdParam,
    response: EmptySchema,
  }),
  operation({
    id: 'rotateIntegrationSigningSecrets',
    method: 'POST',
    path: '/integrations/:id/signing-secrets/rotate',
    access: 'write',
    tag,
    summary: 'Replace the secret that signs the requests handed to an integration',
    params: IdParam,
    response: Type.Object({ newSigningSecret: Type.String() }),
  }),
] as const;

/**
 * The hub: Parley's built-in integrations and those the server's operator published, for every
 * workspace (the CLI looks here when the workspace has no integration of a name).
 */
export const hubOperations = [
  listOperation({
    id: 'listPublicIntegrations',
    path: '/hub/integrations',
    tag,
    summary:
      'List the hub’s integrations: the built-ins (on the first page), then the published ones, newest first',
    query: { name: Type.Optional(Type.String()), version: Type.Optional(Type.String()) },
    key: 'integrations',
    item: Model.Integration,
  }),
  operation({
    id: 'getPublicIntegrationById',
    method: 'GET',
    path: '/hub/integrations/:id',
    access: 'read',
    tag,
    summary: 'Get a built-in or published integration',
    params: IdParam,
    response: IntegrationAnswer,
  }),
  operation({
    id: 'getPublicIntegration',
    method: 'GET',
    path: '/hub/integrations/:name/:version',
    access: 'read',
    tag,
    summary:
      'Get a built-in or published integration by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: IntegrationAnswer,
  }),
] as const;
