import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreatePluginBodySchema,
  PLUGIN_PLATFORMS,
  PluginCodeSchema,
  UpdatePluginBodySchema,
} from '../../domain/packages/schemas.ts';
import { listOperation, operation } from '../operation.ts';
import { NameParams } from './integrations.ts';

const tag = 'Plugins';
const PluginAnswer = Type.Object({ plugin: Model.Plugin });
const ListQuery = { name: Type.Optional(Type.String()), version: Type.Optional(Type.String()) };
const CodeParams = { ...IdParam, platform: Type.Enum(PLUGIN_PLATFORMS) };

/** The plugins a workspace deployed (`bp deploy` in a plugin project). */
export const pluginOperations = [
  operation({
    id: 'createPlugin',
    method: 'POST',
    path: '/plugins',
    access: 'write',
    tag,
    summary: 'Deploy a version of a plugin to the workspace: its definition, its bundles, its dependencies',
    body: CreatePluginBodySchema.properties,
    response: PluginAnswer,
  }),
  listOperation({
    id: 'listPlugins',
    path: '/plugins',
    tag,
    summary: 'List the plugins deployed to the workspace, newest first',
    query: ListQuery,
    key: 'plugins',
    item: Model.Plugin,
  }),
  operation({
    id: 'getPlugin',
    method: 'GET',
    path: '/plugins/:id',
    access: 'read',
    tag,
    summary: 'Get a plugin of the workspace',
    params: IdParam,
    response: PluginAnswer,
  }),
  operation({
    id: 'getPluginByName',
    method: 'GET',
    path: '/plugins/:name/:version',
    access: 'read',
    tag,
    summary:
      'Get a plugin of the workspace by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: PluginAnswer,
  }),
  operation({
    id: 'getPluginCode',
    method: 'GET',
    path: '/plugins/:id/code/:platform',
    access: 'read',
    tag,
    summary: 'Get a bundle of a plugin of the workspace (`node` or `browser`)',
    params: CodeParams,
    response: PluginCodeSchema,
  }),
  operation({
    id: 'updatePlugin',
    method: 'PUT',
    path: '/plugins/:id',
    access: 'write',
    tag,
    summary: 'Update a plugin of the workspace (null removes an entry; `visibility`: the operator alone)',
    params: IdParam,
    body: UpdatePluginBodySchema.properties,
    response: PluginAnswer,
  }),
  operation({
    id: 'deletePlugin',
    method: 'DELETE',
    path: '/plugins/:id',
    access: 'write',
    tag,
    summary: 'Delete a plugin of the workspace',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;

/** The hub's plugins: those the server's operator published, for every workspace. */
export const hubPluginOperations = [
  listOperation({
    id: 'listPublicPlugins',
    path: '/hub/plugins',
    tag,
    summary: 'List the published plugins, newest first',
    query: ListQuery,
    key: 'plugins',
    item: Model.Plugin,
  }),
  operation({
    id: 'getPublicPluginById',
    method: 'GET',
    path: '/hub/plugins/:id',
    access: 'read',
    tag,
    summary: 'Get a published plugin',
    params: IdParam,
    response: PluginAnswer,
  }),
  operation({
    id: 'getPublicPlugin',
    method: 'GET',
    path: '/hub/plugins/:name/:version',
    access: 'read',
    tag,
    summary: 'Get a published plugin by name and version (`latest` or a range: the highest it accepts)',
    params: NameParams,
    response: PluginAnswer,
  }),
  operation({
    id: 'getPublicPluginCode',
    method: 'GET',
    path: '/hub/plugins/:id/code/:platform',
    access: 'read',
    tag,
    summary: 'Get a bundle of a published plugin (`node` or `browser`)',
    params: CodeParams,
    response: PluginCodeSchema,
  }),
] as const;
