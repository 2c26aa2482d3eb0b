// What a deploy of a compiled package makes of the bot (its code and what the Admin API shows of it):
// one mapping, for `parley deploy` and for a console's deploy of a draft.
import type { CompiledPackage } from './format.ts';
import type { Bot, CreateBotBody, UpdateBotBody } from '../domain/bots/schemas.ts';

export type DeployedBot = Pick<
  Bot,
  'id' | 'name' | 'integrations' | 'secrets' | 'actions' | 'events' | 'configuration'
>;

/**
 * The bot's definition from the package: the compiled package as its code, and what the Admin API
 * shows of it (actions, event types, configuration). The update maps are merged by the server, so
 * actions and events the package no longer has are removed with `null`.
 */
export function botDefinition(pkg: CompiledPackage, current?: DeployedBot) {
  const { manifest } = pkg;
  const removed = (names: string[] | undefined, kept: Record<string, unknown>) =>
    Object.fromEntries((names ?? []).filter((n) => !(n in kept)).map((n) => [n, null]));
  const actions = Object.fromEntries(
    Object.entries(pkg.actions).map(([name, a]) => [
      name,
      {
        ...(a.description !== undefined && { description: a.description }),
        input: { schema: a.input },
        output: { schema: a.output },
        cacheable: a.cacheable !== undefined,
      },
    ]),
  );
  const events = Object.fromEntries(
    Object.entries(manifest.events ?? {}).map(([name, e]) => [
      name,
      { ...(e.description !== undefined && { description: e.description }), schema: e.schema ?? {} },
    ]),
  );
  const variables = manifest.configuration?.variables ?? {};
  const defaults = Object.fromEntries(
    Object.entries(variables).flatMap(([name, v]) => (v.default === undefined ? [] : [[name, v.default]])),
  );
  // Values an operator set (updateBot) survive a deploy; variables the package dropped go.
  const kept = Object.fromEntries(
    Object.entries(current?.configuration.data ?? {}).filter(([name]) => name in variables),
  );
  const configuration = {
    data: { ...defaults, ...kept },
    // The variables' types and descriptions, for whoever edits the values with updateBot.
    schema: {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(variables).map(([name, v]) => [
          name,
          { type: v.type, ...(v.description !== undefined && { description: v.description }) },
        ]),
      ),
    },
  };
  const create = {
    name: manifest.name,
    ...(manifest.description !== undefined && { description: manifest.description }),
    code: JSON.stringify(pkg),
    actions,
    events,
    configuration,
  } satisfies CreateBotBody;
  const update = {
    ...create,
    actions: { ...removed(current && Object.keys(current.actions), actions), ...actions },
    events: { ...removed(current && Object.keys(current.events), events), ...events },
  } satisfies UpdateBotBody;
  return { create, update };
}
