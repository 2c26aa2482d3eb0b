// Where each node of a workflow and each transition go on the canvas, laid out by dagre (layered, top to
// bottom, the start first). The boxes have fixed metrics (the canvas draws them at these sizes, one line
// per card), so the layout needs no measuring; transitions between the same two nodes are one arrow with
// their labels joined, and dagre places each label as a box of its own, so none lies on a node.
import dagre from '@dagrejs/dagre';
import type { EdgeLabel, GraphLabel, NodeLabel } from '@dagrejs/dagre';
import type { FlowWorkflow } from '../../../api/types.ts';
import { transitionsOf } from './steps.ts';

/** The boxes' metrics in pixels, as styles.css draws them (`.flow-node`). */
export const BOX = { width: 260, header: 36, line: 22, padding: 10 } as const;
const LABEL = { charWidth: 6.6, padding: 12, height: 20, maxChars: 48 } as const;

export interface Point {
  x: number;
  y: number;
}

export interface PlacedNode {
  id: string;
  /** The box's top left corner. */
  position: Point;
  width: number;
  height: number;
}

export interface PlacedEdge {
  id: string;
  source: string;
  target: string;
  /** The conditions or fields that take it, joined; '' for a plain `next`. */
  label: string;
  /** The path from the source's box to the target's, through the bends dagre chose. */
  points: Point[];
  /** The label's centre. */
  labelAt: Point;
}

export interface FlowLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

/** A label as drawn: at most `maxChars` characters. */
export function shortLabel(label: string): string {
  return label.length > LABEL.maxChars ? `${label.slice(0, LABEL.maxChars - 1)}…` : label;
}

/** The height of a node's box with `cards` lines (one, saying so, when it has none). */
export function boxHeight(cards: number): number {
  return BOX.header + BOX.padding + BOX.line * Math.max(cards, 1);
}

/** The workflow's nodes and transitions, placed. A transition to a node the workflow lacks is left out. */
export function layout(workflow: FlowWorkflow): FlowLayout {
  const graph = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  graph.setGraph({ rankdir: 'TB', nodesep: 48, ranksep: 56, edgesep: 24, marginx: 16, marginy: 16 });
  graph.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(workflow.nodes.map((n) => n.id));
  for (const node of workflow.nodes)
    graph.setNode(node.id, { width: BOX.width, height: boxHeight(node.cards?.length ?? 0) });

  const labels = new Map<string, { source: string; target: string; labels: string[] }>();
  for (const node of workflow.nodes) {
    for (const transition of transitionsOf(node)) {
      if (!ids.has(transition.to)) continue;
      const key = JSON.stringify([node.id, transition.to]);
      const entry = labels.get(key) ?? { source: node.id, target: transition.to, labels: [] };
      if (transition.label && !entry.labels.includes(transition.label)) entry.labels.push(transition.label);
      labels.set(key, entry);
    }
  }
  for (const { source, target, labels: texts } of labels.values()) {
    const text = shortLabel(texts.join(' / '));
    graph.setEdge(source, target, {
      width: text ? text.length * LABEL.charWidth + LABEL.padding : 0,
      height: text ? LABEL.height : 0,
      labelpos: 'c',
    });
  }

  dagre.layout(graph);

  const nodes = workflow.nodes.map((node): PlacedNode => {
    const placed = graph.node(node.id);
    const centre = { x: placed.x ?? 0, y: placed.y ?? 0 };
    return {
      id: node.id,
      position: { x: centre.x - placed.width / 2, y: centre.y - placed.height / 2 },
      width: placed.width,
      height: placed.height,
    };
  });
  const edges = [...labels.values()].map(({ source, target, labels: texts }): PlacedEdge => {
    const placed = graph.edge(source, target);
    const points = placed.points ?? [];
    const middle = points[Math.floor(points.length / 2)] ?? { x: 0, y: 0 };
    return {
      id: `${source}->${target}`,
      source,
      target,
      label: shortLabel(texts.join(' / ')),
      points,
      labelAt: { x: placed.x ?? middle.x, y: placed.y ?? middle.y },
    };
  });
  const { width = 0, height = 0 } = graph.graph();
  return { nodes, edges, width, height };
}
