// One workflow drawn with React Flow (through preact/compat): a box per node with its cards, an arrow per
// transition along the path the layout chose, labelled with its condition. Read-only: nothing moves,
// connects or is deleted; choosing a node (a click, or Enter on it) tells `onSelect`.
import { useCallback, useMemo } from 'preact/hooks';
import { Background, BaseEdge, Controls, Handle, MarkerType, Position, ReactFlow } from '@xyflow/react';
import type { Edge, EdgeProps, Node, NodeProps, OnSelectionChangeParams } from '@xyflow/react';
import type { FlowNode, FlowWorkflow } from '../../../api/types.ts';
import { layout } from './layout.ts';
import type { Point } from './layout.ts';
import { cardSummary } from './steps.ts';

type StepNode = Node<{ node: FlowNode }, 'step'>;
type RoutedEdge = Edge<{ points: Point[]; labelAt: Point; label: string }, 'routed'>;

/** A node's box: its name and type, then a line per card (its type and what it does). */
function StepBox({ data }: NodeProps<StepNode>) {
  const { node } = data;
  const cards = node.cards ?? [];
  return (
    <div class={`flow-node flow-node-${node.type}`} aria-label={`${node.type} node ${node.id}`}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <header>
        <strong>{node.id}</strong>
        <span class="flow-node-type">{node.type}</span>
      </header>
      <ul>
        {cards.length === 0 && <li class="muted">no cards</li>}
        {cards.map((card, i) => (
          <li key={i} title={cardSummary(card)}>
            <span class="flow-card-type">{card.type}</span> {cardSummary(card)}
          </li>
        ))}
      </ul>
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

/** A path through `points`, its bends rounded (a quadratic curve to each midpoint). */
function pathThrough(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  const last = rest.pop();
  let d = `M ${first.x} ${first.y}`;
  for (const [i, point] of rest.entries()) {
    const next = rest[i + 1] ?? last ?? point;
    d += ` Q ${point.x} ${point.y} ${(point.x + next.x) / 2} ${(point.y + next.y) / 2}`;
  }
  return last ? `${d} L ${last.x} ${last.y}` : d;
}

/** A transition along the layout's path, its label where the layout kept room for it. */
function Routed({ id, data, markerEnd }: EdgeProps<RoutedEdge>) {
  if (!data) return null;
  return (
    <BaseEdge
      id={id}
      path={pathThrough(data.points)}
      markerEnd={markerEnd}
      {...(data.label && {
        label: data.label,
        labelX: data.labelAt.x,
        labelY: data.labelAt.y,
        labelShowBg: true,
        labelBgPadding: [6, 3] as [number, number],
        labelBgBorderRadius: 4,
      })}
    />
  );
}

const NODE_TYPES = { step: StepBox };
/** The whole graph in view, never magnified past its size (small graphs stay as drawn). */
const FIT = { maxZoom: 1, padding: 0.08 };
const EDGE_TYPES = { routed: Routed };

export function FlowCanvas(props: {
  workflow: FlowWorkflow;
  onSelect: (nodeId: string | undefined) => void;
}) {
  const { workflow, onSelect } = props;
  const { nodes, edges } = useMemo(() => {
    const placed = layout(workflow);
    const byId = new Map(workflow.nodes.map((n) => [n.id, n]));
    return {
      nodes: placed.nodes.flatMap((p): StepNode[] => {
        const node = byId.get(p.id);
        return node
          ? [
              {
                id: p.id,
                type: 'step',
                position: p.position,
                width: p.width,
                height: p.height,
                data: { node },
              },
            ]
          : [];
      }),
      edges: placed.edges.map((e): RoutedEdge => ({
        id: e.id,
        type: 'routed',
        source: e.source,
        target: e.target,
        selectable: false,
        focusable: false,
        markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 },
        data: { points: e.points, labelAt: e.labelAt, label: e.label },
      })),
    };
  }, [workflow]);
  const selectionChanged = useCallback(
    ({ nodes: selected }: OnSelectionChangeParams) => onSelect(selected[0]?.id),
    [onSelect],
  );
  return (
    <div class="flow-canvas">
      <ReactFlow
        defaultNodes={nodes}
        defaultEdges={edges}
        nodeTypes={NODE_TYPES}
        edgeTypes={EDGE_TYPES}
        onSelectionChange={selectionChanged}
        nodesDraggable={false}
        nodesConnectable={false}
        deleteKeyCode={null}
        multiSelectionKeyCode={null}
        selectionKeyCode={null}
        colorMode="system"
        minZoom={0.2}
        fitView
        fitViewOptions={FIT}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
