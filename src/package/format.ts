// The package's format is declared in the domain (domain/bots/package-format.ts), pure, so that the
// contract answers a deployed package's definition typed by it; here, what only a compiled package has.
import type { FORMAT_VERSION, HookType, PackageDefinition } from '../domain/bots/package-format.ts';

export * from '../domain/bots/package-format.ts';

/**
 * What `parley deploy` uploads (as the bot's `code`): the package, validated, with every piece of code
 * compiled to a JavaScript function body ("unit"). Unit ids, by where the code stands:
 *   action:<name>                          an action's code (returns the output)
 *   hook:<hookType>:<file>                 a hook, e.g. `hook:before_incoming_message:01-filter.ts`
 *   card:<workflow>:<node>:<i>             the code of execute-code card i of a node
 *   cond:<workflow>:<node>:<i>             card i's condition: an expression card's `condition`, a capture's `validation`
 *   when:<workflow>:<node>:<j>             the `when` of transition j of a node
 *   tpl:<workflow>:<node>:<i>:<field>      card i's field (message, prompt, retryMessage, value, input, question, notFound,
 *                                          filter, row, rowId, values, instructions, context, noAnswer, limitMessage,
 *                                          reason, team) when it holds `{{ }}`:
 *                                          the unit returns the field's JSON with every template rendered
 * Fields without templates get no unit: the engine uses their JSON as is.
 */
export interface CompiledPackage extends PackageDefinition {
  parley: typeof FORMAT_VERSION;
  /** Per hook type, the unit ids of its hooks in run order. */
  hooks: Partial<Record<HookType, string[]>>;
  /** Unit id -> JavaScript function body. */
  units: Record<string, string>;
}

export const unitIds = {
  action: (name: string) => `action:${name}`,
  hook: (type: HookType, file: string) => `hook:${type}:${file}`,
  card: (workflow: string, node: string, i: number) => `card:${workflow}:${node}:${i}`,
  condition: (workflow: string, node: string, i: number) => `cond:${workflow}:${node}:${i}`,
  when: (workflow: string, node: string, j: number) => `when:${workflow}:${node}:${j}`,
  template: (workflow: string, node: string, i: number, field: string) =>
    `tpl:${workflow}:${node}:${i}:${field}`,
};
