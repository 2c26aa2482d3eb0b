import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';

/** Strings of chat payloads are never empty, as the official chat client's schemas require. */
const Text = Type.String({ minLength: 1 });

const kind = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties });

const Action = Type.Object({
  action: Type.Enum(['postback', 'url', 'say']),
  label: Text,
  value: Text,
});
const Option = Type.Object({ label: Text, value: Text });
const cardProperties = {
  title: Text,
  subtitle: Type.Optional(Text),
  imageUrl: Type.Optional(Text),
  actions: Type.Array(Action),
};

const text = kind('text', { text: Text });
const markdown = kind('markdown', { markdown: Text });
const image = kind('image', { imageUrl: Text });
const audio = kind('audio', { audioUrl: Text });
const video = kind('video', { videoUrl: Text });
const file = kind('file', { fileUrl: Text, title: Type.Optional(Text) });
const location = kind('location', {
  latitude: Type.Number(),
  longitude: Type.Number(),
  address: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
});
const card = kind('card', cardProperties);

/**
 * A union keyed by `type`, as JSON Schema `oneOf` with a discriminator: validators pick the branch by
 * `type`, so an error names the field that is wrong in it (not "must match a schema in anyOf").
 */
export function keyedUnion<T extends TSchema[]>(branches: [...T]) {
  return Type.Unsafe<Static<ReturnType<typeof Type.Union<T>>>>({
    // `type: object` first: a discriminator only looks at objects, so anything else must fail here.
    type: 'object',
    required: ['type'],
    oneOf: branches,
    discriminator: { propertyName: 'type' },
  });
}

/** The 12 message payloads of the Chat API, one schema each (the webchat adds its own). */
export const CHAT_PAYLOAD_KINDS = [
  text,
  markdown,
  image,
  audio,
  video,
  file,
  location,
  card,
  kind('carousel', { items: Type.Array(card) }),
  kind('choice', { text: Text, options: Type.Array(Option) }),
  kind('dropdown', { text: Text, options: Type.Array(Option) }),
  kind('bloc', { items: Type.Array(keyedUnion([text, markdown, image, audio, video, file, location])) }),
] as const;

/** The message payloads of the Chat API, keyed by `type`. */
export const ChatPayloadSchema = keyedUnion([...CHAT_PAYLOAD_KINDS]);
