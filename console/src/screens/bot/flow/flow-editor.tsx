// The Flow tab for a developer: the bot's draft (getBotDraft: the saved one, else the files of what the bot
// runs) edited as graphs. A node, a card (its form made from the card's JSON Schema), a transition added
// or removed, nodes dragged where the author wants them; the draft is validated by the server as it
// changes (debounced), its problems shown by their node and card with `parley validate`'s messages;
// saved, compared with the deployed version, deployed as a new version with a note; and talked to in the
// test panel (test-panel.tsx) before it is deployed, the node its conversation stands at marked.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { admin } from '../../../api/admin.ts';
import type {
  BotDraft,
  BotPackage,
  DraftLayout,
  FlowCard,
  FlowNode,
  FlowWorkflow,
  PackageProblem,
} from '../../../api/types.ts';
import { useAction, useLoad } from '../../../hooks.ts';
import { InlineError, Loaded } from '../../../ui/components.tsx';
import type { BotScreenProps } from '../screen-props.ts';
import { CARD_TYPES, cardSchema, Fields, newCard } from './card-form.tsx';
import { DraftFiles } from './code-field.tsx';
import {
  addCard,
  addNode,
  addTransition,
  diffWorkflows,
  nextOf,
  placeProblems,
  problemLine,
  removeCard,
  removeTransition,
  replaceCard,
  withWorkflow,
  workflowNames,
  workflowsOf,
} from './draft-model.ts';
import type { Files, PlacedProblem } from './draft-model.ts';
import { DownloadZip } from './download-zip.tsx';
import { FlowCanvas } from './flow-canvas.tsx';
import { WorkflowTabs } from './workflow-tabs.tsx';
import type { CanvasEdit } from './flow-canvas.tsx';
import type { Point } from './layout.ts';
import { cardSummary } from './steps.ts';
import { TestPanel } from './test-panel.tsx';
import type { TestPosition } from './test-panel.tsx';

/** How long the draft rests before it is validated: a pause in typing, not every key. */
const VALIDATE_AFTER_MS = 400;
const NODE_ID = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

export function FlowEditor(props: BotScreenProps & { deployed: BotPackage | undefined; reload: () => void }) {
  const loaded = useLoad(() => admin.getBotDraft(props.bot.id), [props.bot.id]);
  return <Loaded {...loaded}>{({ draft }) => <Editor {...props} initial={draft} />}</Loaded>;
}

function Editor(
  props: BotScreenProps & { deployed: BotPackage | undefined; reload: () => void; initial: BotDraft },
) {
  const { bot, initial, deployed } = props;
  const [files, setFiles] = useState<Files>(initial.files);
  const [layout, setLayout] = useState<DraftLayout>(initial.layout);
  const [dirty, setDirty] = useState(false);
  const [saved, setSaved] = useState(initial.saved);
  // The version the draft is based on: the deployed one when it was opened, or the one its deploy made.
  const [baseVersionId, setBaseVersionId] = useState(initial.baseVersionId);
  const [problems, setProblems] = useState<PackageProblem[] | undefined>(undefined);
  const [validationError, setValidationError] = useState<unknown>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [deploying, setDeploying] = useState(false);
  const [note, setNote] = useState('');
  const workflows = useMemo(() => workflowsOf(files), [files]);
  const names = workflowNames(workflows);
  const [shown, setShown] = useState(names[0] ?? '');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [testAt, setTestAt] = useState<TestPosition | undefined>(undefined);

  useEffect(() => {
    const abort = new AbortController();
    const timer = setTimeout(() => {
      admin.validateBotDraft(bot.id, files, abort.signal).then(
        ({ problems: found }) => {
          setProblems(found);
          setValidationError(undefined);
        },
        (err: unknown) => {
          if (!abort.signal.aborted) setValidationError(err);
        },
      );
    }, VALIDATE_AFTER_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [bot.id, files]);

  const placed = useMemo(() => placeProblems(problems ?? [], workflows), [problems, workflows]);
  const workflow = workflows[shown];
  const node = workflow?.nodes.find((n) => n.id === selected);
  const changes = useMemo(() => diffWorkflows(deployed?.workflows ?? {}, workflows), [deployed, workflows]);

  const change = (next: FlowWorkflow) => {
    setFiles((f) => withWorkflow(f, shown, next));
    setDirty(true);
    setStatus(undefined);
  };
  const positions = layout[shown];
  const edit: CanvasEdit = useMemo(
    () => ({
      positions: positions ?? {},
      onMove: (id: string, at: Point) => {
        setLayout((l) => ({ ...l, [shown]: { ...l[shown], [id]: at } }));
        setDirty(true);
      },
      problems: placed.reduce(
        (m, p) => (p.workflow === shown && p.node ? m.set(p.node, (m.get(p.node) ?? 0) + 1) : m),
        new Map<string, number>(),
      ),
      ...(testAt?.workflow === shown && { current: testAt.node }),
    }),
    [positions, placed, shown, testAt],
  );

  const save = useAction(async () => {
    const answer = await admin.saveBotDraft(bot.id, { files, layout });
    setProblems(answer.problems);
    setBaseVersionId(answer.draft.baseVersionId);
    setSaved(true);
    setDirty(false);
    setStatus('Draft saved.');
  });
  const discard = useAction(async () => {
    await admin.discardBotDraft(bot.id);
    const { draft } = await admin.getBotDraft(bot.id);
    setFiles(draft.files);
    setLayout(draft.layout);
    setBaseVersionId(draft.baseVersionId);
    setSaved(false);
    setDirty(false);
    setStatus('Draft discarded: this is the package the bot runs.');
  });
  const deploy = useAction(async () => {
    if (dirty || !saved) {
      await admin.saveBotDraft(bot.id, { files, layout });
      setSaved(true);
      setDirty(false);
    }
    const { versionId } = await admin.deployBotDraft(bot.id, note);
    setBaseVersionId(versionId);
    setDeploying(false);
    setNote('');
    setStatus('Deployed as a new version: the bot answers with it from its next turn (Versions lists it).');
    props.reload();
    props.reloadBot();
  });

  const count = problems?.length;
  return (
    <section aria-label="Flow" class="flow flow-editing">
      <div class="flow-toolbar" role="toolbar" aria-label="Draft">
        <span class="flow-draft-state" role="status">
          {dirty ? 'Unsaved changes' : saved ? 'Draft saved' : 'No draft yet: the package the bot runs'}
          {' · '}
          {count === undefined
            ? 'validating…'
            : count === 0
              ? 'no problems'
              : `${count} ${count === 1 ? 'problem' : 'problems'}`}
        </span>
        <button type="button" disabled={save.busy || !dirty} onClick={() => void save.run()}>
          Save draft
        </button>
        <button
          type="button"
          class="secondary"
          disabled={deploy.busy || count !== 0}
          onClick={() => {
            deploy.clear();
            setDeploying(true);
          }}
        >
          Deploy…
        </button>
        {saved && (
          <button type="button" class="secondary" disabled={discard.busy} onClick={() => void discard.run()}>
            Discard draft
          </button>
        )}
        <DownloadZip botName={bot.name} files={() => files} />
      </div>
      {initial.codeFrom === 'compiled' && (
        <p class="muted">
          Deployed with <code>parley deploy</code>, which uploads compiled code: the code files of this draft
          hold the JavaScript compiled from their sources, and are not edited here.
        </p>
      )}
      {saved && bot.versionId !== undefined && baseVersionId !== bot.versionId && (
        <p class="notice" role="note">
          The bot runs another version than the one this draft is based on: deploying the draft replaces it,
          and Discard draft starts again from what the bot runs.
        </p>
      )}
      <InlineError error={save.error ?? discard.error ?? validationError} />
      {status && (
        <p class="notice" role="status">
          {status}
        </p>
      )}
      {deploying && (
        <div class="panel confirm-deploy" role="group" aria-labelledby="deploy-draft-title">
          <h2 id="deploy-draft-title">Deploy the draft?</h2>
          <p>
            It is compiled as <code>parley deploy</code> compiles a package and deployed as a new version: the
            bot answers with it from its next turn, and Versions can roll it back.
          </p>
          <label for="deploy-note">Note (what changed, and why)</label>
          <textarea id="deploy-note" rows={2} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          <div class="actions">
            <button type="button" disabled={deploy.busy} onClick={() => void deploy.run()}>
              Yes, deploy
            </button>
            <button
              type="button"
              class="secondary"
              disabled={deploy.busy}
              onClick={() => setDeploying(false)}
            >
              Cancel
            </button>
          </div>
          <InlineError error={deploy.error} />
        </div>
      )}
      <ProblemList
        problems={placed}
        onChoose={(p) => {
          if (p.workflow) setShown(p.workflow);
          setSelected(p.node);
        }}
      />
      <details class="flow-changes">
        <summary>Changes from the deployed version ({changes.length})</summary>
        {changes.length === 0 ? (
          <p class="muted">None: the draft’s workflows are the deployed ones.</p>
        ) : (
          <ul aria-label="Changes">
            {changes.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        )}
      </details>
      <WorkflowTabs
        workflows={workflows}
        shown={shown}
        onShow={(name) => {
          setShown(name);
          setSelected(undefined);
        }}
      />
      {workflow && (
        <div role="tabpanel" id="workflow-panel" aria-labelledby={`workflow-tab-${shown}`}>
          {workflow.description && <p class="muted">{workflow.description}</p>}
          <AddNode
            workflow={workflow}
            onAdd={(id) => {
              change(addNode(workflow, id));
              setSelected(id);
            }}
          />
          <div class="flow-body">
            <FlowCanvas key={shown} workflow={workflow} onSelect={setSelected} edit={edit} />
            <DraftFiles.Provider value={files}>
              <NodeEditor
                workflow={workflow}
                node={node}
                problems={placed.filter((p) => p.workflow === shown && p.node === node?.id)}
                onChange={change}
              />
            </DraftFiles.Provider>
          </div>
        </div>
      )}
      <TestPanel botId={bot.id} files={files} blocked={count !== 0} onPosition={setTestAt} />
    </section>
  );
}

function ProblemList(props: { problems: PlacedProblem[]; onChoose: (p: PlacedProblem) => void }) {
  if (props.problems.length === 0) return null;
  return (
    <ul class="flow-problems" aria-label="Problems">
      {props.problems.map((p) => (
        <li key={problemLine(p)}>
          {p.node ? (
            <button type="button" class="link" onClick={() => props.onChoose(p)}>
              {problemLine(p)}
            </button>
          ) : (
            problemLine(p)
          )}
        </li>
      ))}
    </ul>
  );
}

function AddNode(props: { workflow: FlowWorkflow; onAdd: (id: string) => void }) {
  const [id, setId] = useState('');
  const taken = props.workflow.nodes.some((n) => n.id === id);
  const invalid = id !== '' && (taken || !NODE_ID.test(id));
  return (
    <form
      class="flow-add-node"
      onSubmit={(e) => {
        e.preventDefault();
        if (id === '' || invalid) return;
        props.onAdd(id);
        setId('');
      }}
    >
      <label for="new-node-id">New node</label>
      <input
        id="new-node-id"
        value={id}
        placeholder="e.g. hours"
        onInput={(e) => setId(e.currentTarget.value)}
      />
      <button type="submit" class="secondary" disabled={id === '' || invalid}>
        Add node
      </button>
      {invalid && (
        <small class="problem">
          {taken ? 'the workflow has a node of that id' : 'letters, digits, _ and -, starting with a letter'}
        </small>
      )}
    </form>
  );
}

/** A node's cards (each its form, its problems beside it), its transitions, and forms to add either. */
function NodeEditor(props: {
  workflow: FlowWorkflow;
  node: FlowNode | undefined;
  problems: PlacedProblem[];
  onChange: (workflow: FlowWorkflow) => void;
}) {
  const { workflow, node, problems, onChange } = props;
  const [added, setAdded] = useState<string | undefined>(undefined);
  if (!node)
    return (
      <aside class="flow-details" aria-label="Node">
        <p class="muted">Choose a node to edit its cards and transitions.</p>
      </aside>
    );
  const cards = node.cards ?? [];
  const nodeProblems = problems.filter((p) => p.card === undefined);
  return (
    <aside class="flow-details" aria-label={`Node ${node.id}`}>
      <h2>
        {node.id} <span class="flow-node-type">{node.type}</span>
      </h2>
      {nodeProblems.map((p) => (
        <p class="problem" role="alert" key={problemLine(p)}>
          {p.field}: {p.message}
        </p>
      ))}
      {cards.length === 0 && <p class="muted">No cards.</p>}
      <ol class="flow-cards">
        {cards.map((card, i) => (
          <CardEditor
            key={`${node.id}-${i}`}
            id={`card-${node.id}-${i}`}
            card={card}
            initiallyOpen={added === `${node.id}-${i}`}
            problems={problems.filter((p) => p.card === i)}
            prefix={`/nodes/${workflow.nodes.indexOf(node)}/cards/${i}`}
            onChange={(c) => onChange(replaceCard(workflow, node.id, i, c))}
            onRemove={() => onChange(removeCard(workflow, node.id, i))}
          />
        ))}
      </ol>
      <AddCard
        onAdd={(card) => {
          // The new card's form opens: it is filled in next.
          setAdded(`${node.id}-${cards.length}`);
          onChange(addCard(workflow, node.id, card));
        }}
      />
      <Transitions workflow={workflow} node={node} onChange={onChange} />
    </aside>
  );
}

function CardEditor(props: {
  id: string;
  card: FlowCard;
  initiallyOpen: boolean;
  problems: PlacedProblem[];
  prefix: string;
  onChange: (card: FlowCard) => void;
  onRemove: () => void;
}) {
  const { card, problems, prefix } = props;
  const [open, setOpen] = useState(props.initiallyOpen);
  const schema = cardSchema(card.type);
  // Each problem under the field its pointer names (the card's own field); the others under the card.
  const fieldOf = (p: PlacedProblem) => p.field.slice(prefix.length + 1).split('/')[0] ?? '';
  const byField = (key: string) => problems.filter((p) => fieldOf(p) === key).map((p) => p.message);
  const known = new Set(Object.keys(schema?.properties ?? {}));
  const loose = problems.filter((p) => !known.has(fieldOf(p)) || !open);
  return (
    <li class={problems.length ? 'flow-card-problems' : ''}>
      <h3>{card.type}</h3>
      <p class="flow-card-summary">{cardSummary(card)}</p>
      {loose.map((p) => (
        <p class="problem" role="alert" key={problemLine(p)}>
          {p.field.slice(prefix.length + 1) || card.type}: {p.message}
        </p>
      ))}
      {open && schema ? (
        <Fields
          id={props.id}
          schema={schema}
          value={card}
          onChange={(value) => props.onChange({ ...value, type: card.type } as FlowCard)}
          problems={byField}
        />
      ) : (
        <pre>{JSON.stringify(card, null, 2)}</pre>
      )}
      <div class="actions">
        <button type="button" class="small secondary" onClick={() => setOpen(!open)}>
          {open ? 'Done' : 'Edit'}
        </button>
        <button type="button" class="small secondary" onClick={props.onRemove}>
          Remove card
        </button>
      </div>
    </li>
  );
}

function AddCard(props: { onAdd: (card: FlowCard) => void }) {
  const [type, setType] = useState('say');
  return (
    <div class="flow-add-card">
      <label for="new-card-type">New card</label>
      <select id="new-card-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
        {CARD_TYPES.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <button type="button" class="secondary" onClick={() => props.onAdd(newCard(type))}>
        Add card
      </button>
    </div>
  );
}

/** The node's `next`: each transition with its condition, removable, and a form that adds one. */
function Transitions(props: {
  workflow: FlowWorkflow;
  node: FlowNode;
  onChange: (workflow: FlowWorkflow) => void;
}) {
  const { workflow, node, onChange } = props;
  const [to, setTo] = useState('');
  const [when, setWhen] = useState('');
  const next = nextOf(node);
  return (
    <div class="flow-transitions">
      <h3>Transitions</h3>
      {next.length === 0 && <p class="muted">None: the dialog ends after this node.</p>}
      <ul>
        {next.map((t, j) => (
          <li key={`${j}-${t.to}`}>
            → <strong>{t.to}</strong>{' '}
            {t.when ? <code>when {t.when}</code> : <span class="muted">otherwise</span>}{' '}
            <button
              type="button"
              class="small secondary"
              aria-label={`Remove the transition to ${t.to}`}
              onClick={() => onChange(removeTransition(workflow, node.id, j))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form
        class="flow-add-transition"
        onSubmit={(e) => {
          e.preventDefault();
          if (!to.trim()) return;
          onChange(
            addTransition(workflow, node.id, { to: to.trim(), ...(when.trim() && { when: when.trim() }) }),
          );
          setTo('');
          setWhen('');
        }}
      >
        <label for="transition-to">To node</label>
        <input
          id="transition-to"
          list="transition-targets"
          value={to}
          onInput={(e) => setTo(e.currentTarget.value)}
        />
        <datalist id="transition-targets">
          {workflow.nodes.map((n) => (
            <option key={n.id} value={n.id} />
          ))}
        </datalist>
        <label for="transition-when">When (a condition; empty: otherwise)</label>
        <input id="transition-when" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
        <button type="submit" class="secondary" disabled={!to.trim()}>
          Add transition
        </button>
      </form>
    </div>
  );
}
