// What the flow view says of a workflow's nodes: each card in one line, and every way out of a node
// (its `next`, and the cards that jump: an expression's `to`, a capture's `onFailure`...) as a labelled
// transition. Pure, so the layout and the canvas read the same transitions.
import type { FlowCard, FlowNode } from '../../../api/types.ts';

/** A template or other JSON value of a card, as the package holds it. */
type Json = Extract<FlowCard, { type: 'say' }>['message'];

/** A way out of a node: to another node of the workflow, with what takes it. */
export interface Transition {
  to: string;
  /** The condition (`when`, an expression card's), or the field that names the target (`onFailure`). */
  label: string;
}

const field = (value: Json | undefined, key: string): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value[key] : undefined;

/** A JSON value in one line: text as is, anything else as compact JSON. */
function oneLine(value: Json | undefined): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** What a message says: its text (and a choice's options), else its type. */
function messageSummary(message: Json): string {
  const text = field(message, 'text');
  const options = field(message, 'options');
  const labels = Array.isArray(options) ? options.map((o) => oneLine(field(o, 'label'))) : [];
  if (typeof text === 'string') return labels.length > 0 ? `${text} [${labels.join(' | ')}]` : text;
  const type = field(message, 'type');
  return typeof type === 'string' ? `(${type})` : oneLine(message);
}

/** One line about a card: what it says, asks, sets or calls. */
export function cardSummary(card: FlowCard): string {
  switch (card.type) {
    case 'say':
      return messageSummary(card.message);
    case 'code':
      return card.file ?? (card.code ?? '').split('\n')[0] ?? '';
    case 'expression':
      return `if ${card.condition} → ${card.to}`;
    case 'capture': {
      const choices = card.choices ? ` [${card.choices.map((c) => c.label).join(' | ')}]` : '';
      return `${card.variable} (${card.kind})${choices}`;
    }
    case 'set':
      return `${card.variable} = ${oneLine(card.value)}`;
    case 'action':
      return card.output ? `${card.action} → ${card.output}` : card.action;
    case 'goto':
      return card.node ? `${card.workflow} at ${card.node}` : card.workflow;
    case 'end':
      return 'ends the conversation';
    case 'knowledge':
    case 'knowledgeAnswer':
      return [card.knowledgeBase].flat().join(', ');
    case 'tableFind':
    case 'tableInsert':
    case 'tableUpdate':
    case 'tableUpsert':
    case 'tableDelete':
      return card.variable ? `${card.table} → ${card.variable}` : card.table;
    case 'aiGenerate':
    case 'aiTask':
    case 'autonomous':
      return card.instructions;
    case 'aiTransition':
      return card.transitions.map((t) => t.label).join(' | ');
    case 'handoff':
      return card.team ? `${card.reason} (team ${card.team})` : card.reason;
  }
}

/** The node targets a card names, with the field or condition that leads there. */
function cardTransitions(card: FlowCard): Transition[] {
  const named = (label: string, to: string | undefined): Transition[] => (to ? [{ to, label }] : []);
  switch (card.type) {
    case 'expression':
      return [{ to: card.to, label: card.condition }];
    case 'capture':
    case 'aiTask':
      return named('onFailure', card.onFailure);
    case 'knowledge':
    case 'tableFind':
      return named('onNotFound', card.onNotFound);
    case 'knowledgeAnswer':
      return named('onNoAnswer', card.onNoAnswer);
    case 'aiTransition':
      return [
        ...card.transitions.map((t) => ({ to: t.to, label: t.label })),
        ...named('onNone', card.onNone),
      ];
    case 'autonomous':
      return [
        ...card.tools.flatMap((tool) =>
          tool.type === 'node' ? [{ to: tool.node, label: tool.name ?? 'tool' }] : [],
        ),
        ...named('onLimit', card.onLimit),
      ];
    case 'handoff':
      return [...named('onResolved', card.onResolved), ...named('onTimeout', card.onTimeout)];
    default:
      return [];
  }
}

/** Every way out of a node: its cards' jumps first (they run first), then its `next`. */
export function transitionsOf(node: FlowNode): Transition[] {
  const next =
    node.next === undefined
      ? []
      : typeof node.next === 'string'
        ? [{ to: node.next, label: '' }]
        : node.next.map((t) => ({ to: t.to, label: t.when ?? 'otherwise' }));
  return [...(node.cards ?? []).flatMap(cardTransitions), ...next];
}
