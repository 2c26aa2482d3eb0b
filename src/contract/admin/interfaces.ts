import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { CreateInterfaceBodySchema, UpdateInterfaceBodySchema } from '../../domain/packages/schemas.ts';
import { listOperation, operation } from '../operation.ts';
import { NameParams } from './integrations.ts';

const tag = 'Interfaces';
const InterfaceAnswer = Type.Object({ interface: Model.Interface });
const ListQuery = { name: Type.Optional(Type.String()), version: Type.Optional(Type.String()) };

/** The interfaces a workspace deployed (`bp deploy` in an interface project). */
export const interfaceOperations = [
  operation({
    id: 'createInterface',
    method: 'POST',
    path: '/interfaces',
    access: 'write',
    tag,
    summary: 'Deploy a version of an interface to the workspace (`public`: the operator alone)',
    body: CreateInterfaceBodySchema.properties,
    response: InterfaceAnswer,
  }),
  listOperation({
    id: 'listInterfaces',
    path: '/interfaces',
    tag,
    summary: 'List the interfaces deployed to the workspace, newest first',
    query: ListQuery,
    key: 'interfaces',
    item: Model.Interface,
  }),
  operation({
    id: 'getInterface',
    method: 'GET',
    path: '/interfaces/:id',
    access: 'read',
    tag,
    summary: 'Get an interface of the workspace',
    params: IdParam,
    response: InterfaceAnswer,
  }),
  operation({
    id: 'getInterfaceByName',
    method: 'GET',
    path: '/interfaces/:name/:version',
    access: 'read',
    tag,
    summary:
      'Get an interface of the workspace by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: InterfaceAnswer,
  }),
  operation({
    id: 'updateInterface',
    method: 'PUT',
    path: '/interfaces/:id',
    access: 'write',
    tag,
    summary: 'Update an interface of the workspace (null removes an entry; `public`: the operator alone)',
    params: IdParam,
    body: UpdateInterfaceBodySchema.properties,
    response: InterfaceAnswer,
  }),
  operation({
    id: 'deleteInterface',
    method: 'DELETE',
    path: '/interfaces/:id',
    access: 'write',
    tag,
    summary: 'Delete an interface of the workspace',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;

/** The hub's interfaces: those the server's operator published, for every workspace. */
export const hubInterfaceOperations = [
  listOperation({
    id: 'listPublicInterfaces',
    path: '/hub/interfaces',
    tag,
    summary: 'List the published interfaces, newest first',
    query: ListQuery,
    key: 'interfaces',
    item: Model.Interface,
  }),
  operation({
    id: 'getPublicInterfaceById',
    method: 'GET',
    path: '/hub/interfaces/:id',
    access: 'read',
    tag,
    summary: 'Get a published interface',
    params: IdParam,
    response: InterfaceAnswer,
  }),
  operation({
    id: 'getPublicInterface',
    method: 'GET',
    path: '/hub/interfaces/:name/:version',
    access: 'read',
    tag,
    summary: 'Get a published interface by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: InterfaceAnswer,
  }),
] as const;
