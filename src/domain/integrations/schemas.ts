import { Type } from 'typebox';
import type { Static } from 'typebox';
import { VISIBILITIES } from '../../value-sets.ts';
import { JsonObject, NullableMap, TagChangeMap, Timestamp } from '../shared/schemas.ts';

// An integration a workspace deployed, as the Admin API answers it, and the bodies `bp deploy` sends:
// a module without the store, so the contract declares the Admin API with them.

/** A name as `bp deploy` sends it: `handle/name` (or a bare name), lower case. */
export const IntegrationName = Type.String({
  pattern: '^([a-z0-9][a-z0-9-]{0,49}/)?[a-z0-9][a-z0-9-_]{0,99}$',
});

export const SemVer = Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?$', maxLength: 100 });

/** The parts of a definition kept as they are sent: each a map of named entries (null removes one on update). */
export const DEFINITION_MAPS = [
  'channels',
  'states',
  'events',
  'actions',
  'entities',
  'interfaces',
  'configurations',
] as const;
export type DefinitionMap = (typeof DEFINITION_MAPS)[number];

/** Who may find it: `public` and `unlisted` need the server's operator (`visibility` wins over `public`). */
export const VisibilitySchema = Type.Enum(VISIBILITIES);

const describedFields = {
  title: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  icon: Type.Optional(Type.String({ description: 'An SVG, in base64' })),
  readme: Type.Optional(Type.String({ description: 'Markdown, in base64' })),
  configuration: Type.Optional(JsonObject),
  identifier: Type.Optional(JsonObject),
  user: Type.Optional(JsonObject),
  sdkVersion: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ description: 'The bundle `bp build` made' })),
  url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  public: Type.Optional(Type.Boolean()),
  visibility: Type.Optional(VisibilitySchema),
};

const Changes = Type.Optional(NullableMap(JsonObject));
const definitionChanges = {
  channels: Changes,
  states: Changes,
  events: Changes,
  actions: Changes,
  entities: Changes,
  interfaces: Changes,
  configurations: Changes,
} satisfies Record<DefinitionMap, typeof Changes>;

export const UpdateIntegrationBodySchema = Type.Object({
  ...describedFields,
  ...definitionChanges,
  secrets: Type.Optional(TagChangeMap),
});
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBodySchema>;

export const CreateIntegrationBodySchema = Type.Object({
  name: IntegrationName,
  version: SemVer,
  ...describedFields,
  ...definitionChanges,
  secrets: Type.Optional(TagChangeMap),
  dev: Type.Optional(Type.Boolean()),
});
export type CreateIntegrationBody = Static<typeof CreateIntegrationBodySchema>;

const Entries = Type.Record(Type.String(), JsonObject);

/** What every record the hub answers has, an integration, an interface or a plugin. */
export const hubRecordFields = {
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  name: Type.String(),
  version: Type.String(),
  title: Type.String(),
  description: Type.String(),
  iconUrl: Type.String(),
  readmeUrl: Type.String(),
  public: Type.Boolean(),
};

export const IntegrationSchema = Type.Object({
  ...hubRecordFields,
  visibility: Type.String(),
  verificationStatus: Type.String(),
  dev: Type.Boolean(),
  url: Type.Union([Type.String(), Type.Null()]),
  sdkVersion: Type.Optional(Type.String()),
  configuration: JsonObject,
  identifier: JsonObject,
  user: JsonObject,
  channels: Entries,
  states: Entries,
  events: Entries,
  actions: Entries,
  entities: Entries,
  interfaces: Entries,
  configurations: Entries,
  secrets: Type.Array(Type.String(), { description: 'Names only: values never leave the server' }),
  hasCode: Type.Boolean({ description: 'Whether a bundle was deployed to run it' }),
});
export type Integration = Static<typeof IntegrationSchema>;
