// The bot's flows: the workflows of the Parley package it runs, a tab each, drawn as graphs; choosing a
// node shows its cards' JSON beside the graph. Read-only for a role that may not change bots (which may
// download the draft as a zip); a developer edits the bot's draft instead (flow-editor.tsx).
import { useState } from 'preact/hooks';
import { admin } from '../../../api/admin.ts';
import type { BotPackage, FlowNode } from '../../../api/types.ts';
import { useLoad } from '../../../hooks.ts';
import { can } from '../../../roles.ts';
import { useCurrentSession } from '../../../session.tsx';
import { EmptyState, Loaded } from '../../../ui/components.tsx';
import type { BotScreenProps } from '../screen-props.ts';
import { workflowNames } from './draft-model.ts';
import { DownloadZip } from './download-zip.tsx';
import { FlowCanvas } from './flow-canvas.tsx';
import { FlowEditor } from './flow-editor.tsx';
import { WorkflowTabs } from './workflow-tabs.tsx';

export function Flow(props: BotScreenProps) {
  const { bot } = props;
  const session = useCurrentSession();
  const loaded = useLoad(() => admin.getBotPackage(bot.id), [bot.id, bot.deployedAt]);
  return (
    <Loaded {...loaded}>
      {(answer) =>
        can(session.role, 'bots.write') && answer.runtime !== 'botpress-sdk' ? (
          <FlowEditor {...props} deployed={answer.package} reload={loaded.reload} />
        ) : answer.package ? (
          <Workflows pkg={answer.package} botId={bot.id} botName={bot.name} />
        ) : (
          <EmptyState title="No flows to show">
            <p class="muted">
              {answer.runtime === 'botpress-sdk'
                ? 'This bot runs a bundle deployed with bp deploy: its flows are in its code, not in a Parley package.'
                : 'Deploy a Parley package (parley deploy) to see its workflows here.'}
            </p>
          </EmptyState>
        )
      }
    </Loaded>
  );
}

function Workflows({ pkg, botId, botName }: { pkg: BotPackage; botId: string; botName: string }) {
  const names = workflowNames(pkg.workflows);
  const [shown, setShown] = useState(names[0] ?? '');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const workflow = pkg.workflows[shown];
  const node = workflow?.nodes.find((n) => n.id === selected);
  const show = (name: string) => {
    setShown(name);
    setSelected(undefined);
  };
  return (
    <section aria-label="Flow" class="flow">
      <div class="flow-toolbar" role="toolbar" aria-label="Package">
        <DownloadZip botName={botName} files={async () => (await admin.getBotDraft(botId)).draft.files} />
      </div>
      <WorkflowTabs workflows={pkg.workflows} shown={shown} onShow={show} />
      {workflow && (
        <div role="tabpanel" id="workflow-panel" aria-labelledby={`workflow-tab-${shown}`}>
          {workflow.description && <p class="muted">{workflow.description}</p>}
          <div class="flow-body">
            <FlowCanvas key={shown} workflow={workflow} onSelect={setSelected} />
            <NodeDetails node={node} />
          </div>
        </div>
      )}
    </section>
  );
}

/** The chosen node's cards, in full, as the package holds them. */
function NodeDetails({ node }: { node: FlowNode | undefined }) {
  if (!node)
    return (
      <aside class="flow-details" aria-label="Node">
        <p class="muted">Choose a node to see its cards.</p>
      </aside>
    );
  const cards = node.cards ?? [];
  return (
    <aside class="flow-details" aria-label={`Node ${node.id}`}>
      <h2>
        {node.id} <span class="flow-node-type">{node.type}</span>
      </h2>
      {node.description && <p class="muted">{node.description}</p>}
      {cards.length === 0 && <p class="muted">No cards.</p>}
      <ol class="flow-cards">
        {cards.map((card, i) => (
          <li key={i}>
            <h3>{card.type}</h3>
            <pre>{JSON.stringify(card, null, 2)}</pre>
          </li>
        ))}
      </ol>
      {node.next !== undefined && (
        <>
          <h3>next</h3>
          <pre>{JSON.stringify(node.next, null, 2)}</pre>
        </>
      )}
    </aside>
  );
}
