import { Type } from 'typebox';
import type { Static } from 'typebox';
import { hubRecordFields, IntegrationName, SemVer, VisibilitySchema } from '../integrations/schemas.ts';
import { JsonObject, Nullable, NullableMap, TagChangeMap } from '../shared/schemas.ts';

// Interfaces and plugins a workspace deployed, as the Admin API answers them, and the bodies `bp deploy`
// sends for them (packages/cli's deploy-command.ts): a module without the store, so the contract declares
// the Admin API with them. Their parts are kept as sent (JSON Schemas the SDK wrote).

const Entries = Type.Record(Type.String(), JsonObject);
const Changes = Type.Optional(NullableMap(JsonObject));
const Attributes = Type.Record(Type.String(), Type.String());

const described = {
  sdkVersion: Type.Optional(Type.String()),
  icon: Type.Optional(Type.String({ description: 'An SVG, in base64' })),
  readme: Type.Optional(Type.String({ description: 'Markdown, in base64' })),
  title: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  public: Type.Optional(Type.Boolean()),
};

const recordFields = { ...hubRecordFields, attributes: Type.Optional(Attributes) };

/** The maps of an interface's definition: each a map of named entries (null removes one on update). */
export const INTERFACE_MAPS = ['entities', 'events', 'actions', 'channels', 'attributes'] as const;

export const CreateInterfaceBodySchema = Type.Object({
  name: IntegrationName,
  version: SemVer,
  entities: Type.Optional(Entries),
  events: Type.Optional(Entries),
  actions: Type.Optional(Entries),
  channels: Type.Optional(Entries),
  nameTemplate: Type.Optional(JsonObject),
  attributes: Type.Optional(Attributes),
  ...described,
});
export type CreateInterfaceBody = Static<typeof CreateInterfaceBodySchema>;

export const UpdateInterfaceBodySchema = Type.Object({
  entities: Changes,
  events: Changes,
  actions: Changes,
  channels: Changes,
  nameTemplate: Type.Optional(Nullable(JsonObject)),
  attributes: Type.Optional(TagChangeMap),
  ...described,
});
export type UpdateInterfaceBody = Static<typeof UpdateInterfaceBodySchema>;

export const InterfaceSchema = Type.Object({
  ...recordFields,
  entities: Entries,
  events: Entries,
  actions: Entries,
  channels: Entries,
  nameTemplate: Type.Optional(JsonObject),
});
export type Interface = Static<typeof InterfaceSchema>;

/** An interface or integration a plugin depends on, as the CLI resolves it (its id, by name and version). */
const DependencyRef = Type.Object({
  id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
});
const ResolvedRef = Type.Object({ id: Type.String(), name: Type.String(), version: Type.String() });

/** The maps of a plugin's definition (null removes an entry on update). */
export const PLUGIN_MAPS = ['states', 'events', 'actions', 'attributes'] as const;
/** Its parts of maps one level down: `user.tags`..., `dependencies.interfaces`... */
export const PLUGIN_NESTED_MAPS = {
  user: ['tags'],
  conversation: ['tags'],
  message: ['tags'],
  dependencies: ['interfaces', 'integrations'],
} as const;

const TagsPart = Type.Object({ tags: Entries });

export const CreatePluginBodySchema = Type.Object({
  name: IntegrationName,
  version: SemVer,
  configuration: Type.Optional(JsonObject),
  states: Type.Optional(Entries),
  events: Type.Optional(Entries),
  actions: Type.Optional(Entries),
  user: Type.Optional(TagsPart),
  conversation: Type.Optional(TagsPart),
  message: Type.Optional(TagsPart),
  code: Type.Object(
    { node: Type.String(), browser: Type.String() },
    { description: 'The bundles `bp build` made: CommonJS for Node, ESM for browsers' },
  ),
  visibility: Type.Optional(VisibilitySchema),
  dependencies: Type.Optional(
    Type.Object({
      interfaces: Type.Optional(Type.Record(Type.String(), DependencyRef)),
      integrations: Type.Optional(Type.Record(Type.String(), DependencyRef)),
    }),
  ),
  attributes: Type.Optional(Attributes),
  ...described,
});
export type CreatePluginBody = Static<typeof CreatePluginBodySchema>;

const TagsChange = Type.Object({ tags: NullableMap(JsonObject) });

export const UpdatePluginBodySchema = Type.Object({
  configuration: Type.Optional(Nullable(JsonObject)),
  states: Changes,
  events: Changes,
  actions: Changes,
  user: Type.Optional(TagsChange),
  conversation: Type.Optional(TagsChange),
  message: Type.Optional(TagsChange),
  code: Type.Optional(
    Type.Object({ node: Type.Optional(Type.String()), browser: Type.Optional(Type.String()) }),
  ),
  visibility: Type.Optional(VisibilitySchema),
  dependencies: Type.Optional(
    Type.Object({
      interfaces: Type.Optional(NullableMap(DependencyRef)),
      integrations: Type.Optional(NullableMap(DependencyRef)),
    }),
  ),
  attributes: Type.Optional(TagChangeMap),
  ...described,
});
export type UpdatePluginBody = Static<typeof UpdatePluginBodySchema>;

export const PluginSchema = Type.Object({
  ...recordFields,
  configuration: JsonObject,
  states: Entries,
  events: Entries,
  actions: Entries,
  user: TagsPart,
  conversation: TagsPart,
  message: TagsPart,
  dependencies: Type.Object({
    interfaces: Type.Record(Type.String(), ResolvedRef),
    integrations: Type.Record(Type.String(), ResolvedRef),
  }),
  visibility: VisibilitySchema,
  lifecycleStatus: Type.Literal('published'),
});
export type Plugin = Static<typeof PluginSchema>;

/** A plugin's bundle for one platform, as `bp add` reads it. */
export const PluginCodeSchema = Type.Object({ code: Type.String() });
export const PLUGIN_PLATFORMS = ['node', 'browser'] as const;
export type PluginPlatform = (typeof PLUGIN_PLATFORMS)[number];
