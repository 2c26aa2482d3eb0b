// Type tests of the spec/handler split, checked by `npm run typecheck` and never run: each
// `@ts-expect-error` line must be a type error, or the typecheck fails.
import { Type } from 'typebox';
import type { Static } from 'typebox';
import { listOperation, operation } from '../../src/contract/operation.ts';
import { implement } from '../../src/handlers/operation.ts';
import type { Handlers } from '../../src/handlers/operation.ts';

interface Actor {
  name: string;
}

const specs = [
  operation({
    id: 'getThing',
    method: 'GET',
    path: '/things/:id',
    access: 'read',
    tag: 'Things',
    summary: 'Get a thing',
    params: { id: Type.String() },
    response: Type.Object({ thing: Type.Object({ name: Type.String() }) }),
  }),
  listOperation({
    id: 'listThings',
    path: '/things',
    tag: 'Things',
    summary: 'List things',
    query: { prefix: Type.Optional(Type.String()) },
    key: 'things',
    item: Type.Object({ name: Type.String() }),
  }),
  listOperation({
    id: 'listNames',
    path: '/names',
    tag: 'Things',
    summary: 'List names, with no page size',
    pageSize: false,
    key: 'names',
    item: Type.String(),
  }),
] as const;

const [getThing] = specs;
type ListThings = (typeof specs)[1];
type ListNames = (typeof specs)[2];

// A spec keeps its types: its operationId, what a call takes and what it answers.
export const id: 'getThing' = getThing.id;
export const call: Static<typeof getThing.input> = { id: 'a' };
// @ts-expect-error an argument the spec does not declare
export const undeclared: Static<typeof getThing.input> = { id: 'a', other: 1 };
export const answer: Static<typeof getThing.response> = { thing: { name: 'a' } };
export const page: Static<ListThings['response']> = { things: [{ name: 'a' }], meta: {} };
export const listCall: Static<ListThings['input']> = { prefix: 'a', pageSize: 10, nextToken: 't' };
// @ts-expect-error a list declared with `pageSize: false` takes none
export const unsized: Static<ListNames['input']> = { pageSize: 10 };

const good = {
  getThing: async (_domain, actor, { id }) => ({ thing: { name: `${actor.name}:${id}` } }),
  // A list's handler answers a page; the binding makes the envelope.
  listThings: async (_domain, _actor, { prefix }) => ({ items: [{ name: prefix ?? '' }] }),
  listNames: async () => ({ items: ['a'], nextToken: 'b' }),
} satisfies Handlers<Actor, typeof specs>;

export const bound = () => implement<Actor>()(specs, good);

export const missing = () =>
  // @ts-expect-error a handler missing
  implement<Actor>()(specs, { getThing: good.getThing, listThings: good.listThings });

export const extra = () =>
  implement<Actor>()(specs, {
    ...good,
    // @ts-expect-error a handler of no spec
    deleteThing: async () => ({}),
  });

export const wrongInput = () =>
  implement<Actor>()(specs, {
    ...good,
    // @ts-expect-error an argument the spec does not declare
    getThing: async (_domain, _actor, { name }: { name: string }) => ({ thing: { name } }),
  });

export const wrongAnswer = () =>
  implement<Actor>()(specs, {
    ...good,
    // @ts-expect-error an answer of another shape
    getThing: async () => ({ thing: { name: 5 } }),
  });

export const envelope = () =>
  implement<Actor>()(specs, {
    ...good,
    // @ts-expect-error a list's handler answers a page, not the envelope
    listThings: async () => ({ things: [], meta: {} }),
  });
