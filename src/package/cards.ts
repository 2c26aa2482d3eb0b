import type { Static } from 'typebox';
import type { AutonomousTool, Card, CardSchema } from './format.ts';

/**
 * format.ts builds each card with `Type.Literal(type)` where `type` is a plain string, so `Card`'s
 * `type` is `string` and a switch on it does not narrow. This view pairs each branch of CardSchema
 * (in its order) with its literal, so the fields still come from the schema.
 */
type Branches = (typeof CardSchema)['anyOf'];
type Branch<I extends number, K extends string> = Static<Branches[I]> & { type: K };

export type TypedCard =
  | Branch<0, 'say'>
  | Branch<1, 'code'>
  | Branch<2, 'expression'>
  | Branch<3, 'capture'>
  | Branch<4, 'set'>
  | Branch<5, 'action'>
  | Branch<6, 'goto'>
  | Branch<7, 'end'>
  | Branch<8, 'knowledge'>
  | Branch<9, 'tableFind'>
  | Branch<10, 'tableInsert'>
  | Branch<11, 'tableUpdate'>
  | Branch<12, 'tableUpsert'>
  | Branch<13, 'tableDelete'>
  | Branch<14, 'aiGenerate'>
  | Branch<15, 'aiTask'>
  | Branch<16, 'aiTransition'>
  | Branch<17, 'knowledgeAnswer'>
  | Branch<18, 'autonomous'>
  | Branch<19, 'handoff'>;

/** The cards that call the Tables API. */
export type TableCard = Extract<Card, { table: string }>;
export const isTableCard = (card: Card): card is TableCard => 'table' in card;

/** A card that matched CardSchema, whose `type` therefore names its branch. */
export const typedCard = (card: Card) => card;

/** What a model answers an aiTransition card when none of its labels applies (so no label may be it). */
export const AI_TRANSITION_NONE = 'none';

/** The name a model calls an autonomous card's tool by: the one the author gave, else one from its target. */
export function toolName(tool: AutonomousTool): string {
  if (tool.name !== undefined) return tool.name;
  switch (tool.type) {
    case 'action':
      return tool.action;
    case 'node':
      return `goto_${tool.node}`;
    case 'workflow':
      return `start_${tool.workflow}`;
    case 'knowledge':
      return `search_${tool.knowledgeBase}`;
    case 'sendMessage':
      return 'send_message';
    case 'waitForUser':
      return 'wait_for_user';
  }
}
