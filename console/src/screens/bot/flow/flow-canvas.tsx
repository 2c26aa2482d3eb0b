// One workflow drawn with React Flow (through preact/compat): a box per node with its cards, an arrow per
// transition along the path the layout chose, labelled with its condition. Read-only: nothing moves,
// connects or is deleted; choosing a node (a click, or Enter on it) tells `onSelect`. Editing (`edit`),
// nodes are dragged where the author wants them (told to `onMove`, kept in the draft), the others stay
// where the layout put them, and arrows go straight from box to box, wherever the boxes are.
import { useCallback, useEffect, useMemo, useRef } from 'preact/hooks';
import {
  Background,
  BaseEdge,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useNodesState,
} from '@xyflow/react';
import type {
  Edge,
  EdgeProps,
  Node,
  NodeProps,
  OnNodeDrag,
  OnSelectionChangeParams,
  ReactFlowProps,
} from '@xyflow/react';
import type { ComponentChildren } from 'preact';
import type { FlowNode, FlowWorkflow } from '../../../api/types.ts';
import { layout } from './layout.ts';
import type { Point } from './layout.ts';
import { cardSummary } from './steps.ts';

type StepNode = Node<{ node: FlowNode; problems?: number; current?: boolean }, 'step'>;
type RoutedEdge = Edge<{ points: Point[]; labelAt: Point; label: string }, 'routed'>;

/** A node's box: its name and type, then a line per card (its type and what it does). */
function StepBox({ data }: NodeProps<StepNode>) {
  const { node, problems, current } = data;
  const cards = node.cards ?? [];
  return (
    <div
      class={`flow-node flow-node-${node.type}${problems ? ' flow-node-problems' : ''}${current ? ' flow-node-current' : ''}`}
      aria-label={`${node.type} node ${node.id}`}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <header>
        <strong>{node.id}</strong>
        {problems ? (
          <span class="flow-node-problem-count" title="problems">
            {problems} {problems === 1 ? 'problem' : 'problems'}
          </span>
        ) : null}
        {current && (
          <span class="flow-node-here" title="The test conversation stands here">
            test is here
          </span>
        )}
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

/** What the canvas needs to edit: where the author left nodes, who is told of a move, the problems. */
export interface CanvasEdit {
  positions: Record<string, Point>;
  onMove: (nodeId: string, position: Point) => void;
  /** Problems by node id. */
  problems: Map<string, number>;
  /** The node the test conversation stands at (test-panel.tsx), drawn marked. */
  current?: string;
}

/** The workflow's nodes placed (by the layout, or where the author left them) and its transitions. */
function graphOf(workflow: FlowWorkflow, edit: CanvasEdit | undefined) {
  const placed = layout(workflow);
  const byId = new Map(workflow.nodes.map((n) => [n.id, n]));
  const nodes = placed.nodes.flatMap((p): StepNode[] => {
    const node = byId.get(p.id);
    const problems = edit?.problems.get(p.id);
    return node
      ? [
          {
            id: p.id,
            type: 'step',
            position: edit?.positions[p.id] ?? p.position,
            width: p.width,
            height: p.height,
            data: {
              node,
              ...(problems !== undefined && { problems }),
              ...(edit?.current === p.id && { current: true }),
            },
          },
        ]
      : [];
  });
  const edges = placed.edges.map((e): RoutedEdge | Edge => ({
    id: e.id,
    source: e.source,
    target: e.target,
    selectable: false,
    focusable: false,
    markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 },
    ...(edit
      ? { ...(e.label && { label: e.label, labelShowBg: true }) }
      : { type: 'routed', data: { points: e.points, labelAt: e.labelAt, label: e.label } }),
  }));
  return { nodes, edges };
}

export function FlowCanvas(props: {
  workflow: FlowWorkflow;
  onSelect: (nodeId: string | undefined) => void;
  edit?: CanvasEdit;
}) {
  return props.edit ? <EditableCanvas {...props} edit={props.edit} /> : <ReadOnlyCanvas {...props} />;
}

/** Nodes that move: the canvas holds their places, the workflow and the draft's layout set them. */
function EditableCanvas(props: {
  workflow: FlowWorkflow;
  onSelect: (nodeId: string | undefined) => void;
  edit: CanvasEdit;
}) {
  const { workflow, onSelect, edit } = props;
  const graph = useMemo(() => graphOf(workflow, edit), [workflow, edit]);
  const [nodes, setNodes, onNodesChange] = useNodesState<StepNode>(graph.nodes);
  const drawn = useRef(graph);
  // A change of the workflow (a node, a card added) draws its nodes again, keeping the one selected.
  useEffect(() => {
    // Not the first graph: its nodes are being measured, and replaced now they would never be.
    if (drawn.current === graph) return;
    drawn.current = graph;
    setNodes((shown) => {
      // What React Flow measured of a box stays: a box it does not measure again would lose its arrows.
      const before = new Map(shown.map((n) => [n.id, n]));
      return graph.nodes.map((n) => {
        const was = before.get(n.id);
        return { ...n, selected: was?.selected ?? false, ...(was?.measured && { measured: was.measured }) };
      });
    });
  }, [graph, setNodes]);
  const dragged: OnNodeDrag<StepNode> = useCallback(
    (_event, node) =>
      edit.onMove(node.id, { x: Math.round(node.position.x), y: Math.round(node.position.y) }),
    [edit],
  );
  return (
    <Frame onSelect={onSelect}>
      {(shared) => (
        <ReactFlow
          {...shared}
          nodes={nodes}
          edges={graph.edges}
          onNodesChange={onNodesChange}
          onNodeDragStop={dragged}
        />
      )}
    </Frame>
  );
}

function ReadOnlyCanvas(props: { workflow: FlowWorkflow; onSelect: (nodeId: string | undefined) => void }) {
  const { workflow, onSelect } = props;
  const { nodes, edges } = useMemo(() => graphOf(workflow, undefined), [workflow]);
  return (
    <Frame onSelect={onSelect}>
      {(shared) => (
        <ReactFlow
          {...shared}
          defaultNodes={nodes}
          defaultEdges={edges}
          edgeTypes={EDGE_TYPES}
          nodesDraggable={false}
        />
      )}
    </Frame>
  );
}

/**
 * The canvas around either graph, and the props both give React Flow: its boxes, the choice of a node,
 * no connecting, deleting or multiple selection by keyboard, the whole graph in view; a background and
 * zoom controls.
 */
function Frame(props: {
  onSelect: (nodeId: string | undefined) => void;
  children: (shared: ReactFlowProps<StepNode>) => ComponentChildren;
}) {
  const { onSelect } = props;
  const selectionChanged = useCallback(
    ({ nodes: selected }: OnSelectionChangeParams) => onSelect(selected[0]?.id),
    [onSelect],
  );
  return (
    <div class="flow-canvas">
      {props.children({
        nodeTypes: NODE_TYPES,
        onSelectionChange: selectionChanged,
        nodesConnectable: false,
        deleteKeyCode: null,
        multiSelectionKeyCode: null,
        selectionKeyCode: null,
        colorMode: 'system',
        minZoom: 0.2,
        fitView: true,
        fitViewOptions: FIT,
        children: [<Background key="background" />, <Controls key="controls" showInteractive={false} />],
      })}
    </div>
  );
}
