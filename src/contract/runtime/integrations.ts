import { Type } from 'typebox';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { operation } from '../operation.ts';

export const integrationOperations = [
  operation({
    id: 'configureIntegration',
    method: 'POST',
    path: '/integrations/configure',
    access: 'write',
    tag: 'Integrations',
    summary: 'Configure the calling integration',
    description: 'Accepted for integrations written for the hosted product; Parley has nothing to configure.',
    body: {
      identifier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      scheduleRegisterCall: Type.Optional(Type.String()),
      sandboxIdentifiers: Type.Optional(Type.Union([JsonObject, Type.Null()])),
    },
    response: EmptySchema,
  }),
] as const;
