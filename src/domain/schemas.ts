import { Type } from 'typebox';

/** Shared pieces of the resource schemas: each resource module composes these. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export const TagMap = Type.Record(Type.String(), Type.String());
/** A tag update: a string sets the key, `null` deletes it. */
export const TagChangeMap = Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]));
export const TagDefinitions = Type.Record(
  Type.String(),
  Type.Object({ title: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }),
);
export const Email = Type.String({ format: 'email', maxLength: 320 });
