// The tabs of a package's workflows, one shown at a time (`main` first): the read-only view's and the
// editor's.
import { workflowNames } from './draft-model.ts';

export function WorkflowTabs(props: {
  workflows: Record<string, unknown>;
  shown: string;
  onShow: (name: string) => void;
}) {
  return (
    <div role="tablist" aria-label="Workflows" class="flow-tabs">
      {workflowNames(props.workflows).map((name) => (
        <button
          key={name}
          type="button"
          class="secondary"
          role="tab"
          id={`workflow-tab-${name}`}
          aria-selected={name === props.shown}
          aria-controls="workflow-panel"
          onClick={() => props.onShow(name)}
        >
          {name}
        </button>
      ))}
    </div>
  );
}
