// A draft as the Flow tab edits it: its workflows' files parsed, the edits an author makes (a node, a card,
// a transition added or removed), written back as the package's files, the server's problems placed by
// node and card, and what changed since the deployed package. Pure: the screen holds the state.
import type { FlowCard, FlowNode, FlowWorkflow, PackageProblem } from '../../../api/types.ts';
import { cardSummary, transitionsOf } from './steps.ts';

export type Files = Record<string, string>;
type Transition = Extract<NonNullable<FlowNode['next']>, unknown[]>[number];

const WORKFLOW_FILE = /^workflows\/([^/]+)\.json$/;
export const workflowFile = (name: string) => `workflows/${name}.json`;

/** The workflows the files hold, by name; a file that is not a workflow's JSON is left out. */
export function workflowsOf(files: Files): Record<string, FlowWorkflow> {
  const workflows: Record<string, FlowWorkflow> = {};
  for (const [file, text] of Object.entries(files)) {
    const name = WORKFLOW_FILE.exec(file)?.[1];
    if (!name) continue;
    try {
      const value = JSON.parse(text) as FlowWorkflow;
      if (Array.isArray(value.nodes)) workflows[name] = value;
    } catch {
      // A file that does not parse stays as it is; the server's problems say why.
    }
  }
  return workflows;
}

/** `main` first (where conversations start), then the others by name. */
export function workflowNames(workflows: Record<string, unknown>): string[] {
  return Object.keys(workflows).sort((a, b) => (a === 'main' ? -1 : b === 'main' ? 1 : a.localeCompare(b)));
}

/** The files with `workflow` written as its JSON, as `parley init` and the examples lay it out. */
export function withWorkflow(files: Files, name: string, workflow: FlowWorkflow): Files {
  return { ...files, [workflowFile(name)]: `${JSON.stringify(workflow, null, 2)}\n` };
}

/** The workflow with node `id` changed by `change`. */
function withNode(workflow: FlowWorkflow, id: string, change: (node: FlowNode) => FlowNode): FlowWorkflow {
  return { ...workflow, nodes: workflow.nodes.map((n) => (n.id === id ? change(n) : n)) };
}

export function addNode(workflow: FlowWorkflow, id: string): FlowWorkflow {
  return { ...workflow, nodes: [...workflow.nodes, { id, type: 'standard', cards: [] }] };
}

export function addCard(workflow: FlowWorkflow, nodeId: string, card: FlowCard): FlowWorkflow {
  return withNode(workflow, nodeId, (n) => ({ ...n, cards: [...(n.cards ?? []), card] }));
}

export function replaceCard(workflow: FlowWorkflow, nodeId: string, i: number, card: FlowCard): FlowWorkflow {
  return withNode(workflow, nodeId, (n) => ({
    ...n,
    cards: (n.cards ?? []).map((c, j) => (j === i ? card : c)),
  }));
}

export function removeCard(workflow: FlowWorkflow, nodeId: string, i: number): FlowWorkflow {
  return withNode(workflow, nodeId, (n) => ({ ...n, cards: (n.cards ?? []).filter((_, j) => j !== i) }));
}

/** A node's `next` as a list of transitions. */
export function nextOf(node: FlowNode): Transition[] {
  if (node.next === undefined) return [];
  return typeof node.next === 'string' ? [{ to: node.next }] : node.next;
}

/** `next` written back: one unconditional transition as its target alone, none as nothing. */
function withNext(node: FlowNode, next: Transition[]): FlowNode {
  const { next: _, ...rest } = node;
  const only = next[0];
  if (!only) return rest;
  return { ...rest, next: next.length === 1 && only.when === undefined ? only.to : next };
}

/**
 * A transition added to a node's `next`: one with a condition goes before the first without (which is
 * taken whenever it is reached, so nothing after it would be).
 */
export function addTransition(
  workflow: FlowWorkflow,
  nodeId: string,
  transition: { to: string; when?: string },
): FlowWorkflow {
  return withNode(workflow, nodeId, (n) => {
    const next = nextOf(n);
    const fallback = next.findIndex((t) => t.when === undefined);
    const at = transition.when === undefined || fallback < 0 ? next.length : fallback;
    return withNext(n, [...next.slice(0, at), transition, ...next.slice(at)]);
  });
}

export function removeTransition(workflow: FlowWorkflow, nodeId: string, j: number): FlowWorkflow {
  return withNode(workflow, nodeId, (n) =>
    withNext(
      n,
      nextOf(n).filter((_, k) => k !== j),
    ),
  );
}

/** Where a problem is, in the workflows' terms: a node, a card of it, or neither (another file). */
export interface PlacedProblem extends PackageProblem {
  workflow?: string;
  node?: string;
  card?: number;
}

/** The problems placed by the JSON pointer of their field, in the workflow the draft holds. */
export function placeProblems(
  problems: PackageProblem[],
  workflows: Record<string, FlowWorkflow>,
): PlacedProblem[] {
  return problems.map((problem) => {
    const workflow = WORKFLOW_FILE.exec(problem.file)?.[1];
    const at = /^\/nodes\/(\d+)(?:\/cards\/(\d+))?/.exec(problem.field);
    const node = workflow && at ? workflows[workflow]?.nodes[Number(at[1])]?.id : undefined;
    return {
      ...problem,
      ...(workflow !== undefined && { workflow }),
      ...(node !== undefined && { node }),
      ...(node !== undefined && at?.[2] !== undefined && { card: Number(at[2]) }),
    };
  });
}

/** A problem as `parley validate` prints it. */
export const problemLine = (p: PackageProblem) =>
  `${p.file}:${p.line}:${p.column} ${p.field ? `${p.field}: ` : ''}${p.message}`;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What changed from the deployed workflows to the draft's, a line each: nodes, cards, transitions. */
export function diffWorkflows(
  deployed: Record<string, FlowWorkflow>,
  draft: Record<string, FlowWorkflow>,
): string[] {
  const lines: string[] = [];
  for (const name of Object.keys(deployed)) if (!(name in draft)) lines.push(`workflow ${name} removed`);
  for (const [name, workflow] of Object.entries(draft)) {
    const before = deployed[name];
    if (!before) {
      lines.push(`workflow ${name} added`);
      continue;
    }
    const old = new Map(before.nodes.map((n) => [n.id, n]));
    const now = new Set(workflow.nodes.map((n) => n.id));
    for (const node of before.nodes) if (!now.has(node.id)) lines.push(`${name}: node ${node.id} removed`);
    for (const node of workflow.nodes) {
      const was = old.get(node.id);
      if (!was) {
        lines.push(`${name}: node ${node.id} added`);
        for (const card of node.cards ?? [])
          lines.push(`${name}: ${node.id}: card ${card.type} added (${cardSummary(card)})`);
        for (const t of transitionsOf(node))
          lines.push(`${name}: transition ${node.id} → ${t.to} added${t.label ? ` (${t.label})` : ''}`);
        continue;
      }
      const cards = node.cards ?? [];
      const oldCards = was.cards ?? [];
      for (let i = 0; i < Math.max(cards.length, oldCards.length); i++) {
        const [a, b] = [oldCards[i], cards[i]];
        if (a && !b) lines.push(`${name}: ${node.id}: card ${i + 1} (${a.type}) removed`);
        else if (!a && b) lines.push(`${name}: ${node.id}: card ${b.type} added (${cardSummary(b)})`);
        else if (a && b && !same(a, b)) lines.push(`${name}: ${node.id}: card ${i + 1} (${b.type}) changed`);
      }
      // A lone `next` and an unconditional one in a list are the same way out.
      const key = (t: { to: string; label: string }) => `${t.to}\n${t.label === 'otherwise' ? '' : t.label}`;
      const oldT = new Map(transitionsOf(was).map((t) => [key(t), t]));
      const newT = new Map(transitionsOf(node).map((t) => [key(t), t]));
      for (const [k, t] of oldT)
        if (!newT.has(k))
          lines.push(`${name}: transition ${node.id} → ${t.to} removed${t.label ? ` (${t.label})` : ''}`);
      for (const [k, t] of newT)
        if (!oldT.has(k))
          lines.push(`${name}: transition ${node.id} → ${t.to} added${t.label ? ` (${t.label})` : ''}`);
      if (was.type !== node.type) lines.push(`${name}: ${node.id}: type ${was.type} → ${node.type}`);
    }
  }
  return lines;
}
