// The workspace's own model providers: OpenAI-compatible endpoints its bots reach as `<name>:<model>`,
// beside the server's (`default`). Administrators and owners add and remove them; developers read
// them. A provider's key is sent once and never shown again.
import { useState } from 'preact/hooks';
import { models } from '../api/models.ts';
import type { LlmProvider } from '../api/models.ts';
import { can } from '../roles.ts';
import { useCurrentSession } from '../session.tsx';
import {
  ConfirmButton,
  EmptyState,
  Field,
  InlineError,
  ListTable,
  Loaded,
  PageHeader,
  valueOf,
} from '../ui/components.tsx';
import type { Column } from '../ui/components.tsx';
import { useAction, useLoad } from '../hooks.ts';

type Row = LlmProvider & { id: string };

/** `a, b` as the list of ids `a` and `b`; empty: none declared (the provider's GET /models is read). */
const modelList = (text: string) =>
  text
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');

function AddProvider({ added }: { added: () => void }) {
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [declared, setDeclared] = useState('');
  const add = useAction(async () => {
    const ids = modelList(declared);
    await models.createLlmProvider({
      name: name.trim(),
      baseUrl: baseUrl.trim(),
      ...(apiKey !== '' && { apiKey }),
      ...(ids.length > 0 && { models: ids }),
    });
    setName('');
    setBaseUrl('');
    setApiKey('');
    setDeclared('');
    added();
  });
  return (
    <form
      class="panel inline-form"
      aria-label="Add a provider"
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <Field label="Name" hint="lower-case letters, digits, -">
        <input
          required
          value={name}
          pattern="[a-z0-9][a-z0-9\-]{0,39}"
          placeholder="ollama"
          onInput={(e) => setName(valueOf(e))}
        />
      </Field>
      <Field label="Base URL" hint="OpenAI-compatible, up to /v1">
        <input
          type="url"
          required
          value={baseUrl}
          placeholder="https://models.example.com/v1"
          onInput={(e) => setBaseUrl(valueOf(e))}
        />
      </Field>
      <Field label="API key" hint="never shown again">
        <input type="password" autoComplete="off" value={apiKey} onInput={(e) => setApiKey(valueOf(e))} />
      </Field>
      <Field label="Models" hint="comma-separated; empty: read from its GET /models">
        <input value={declared} onInput={(e) => setDeclared(valueOf(e))} />
      </Field>
      <button type="submit" disabled={add.busy}>
        Add provider
      </button>
      <InlineError error={add.error} />
    </form>
  );
}

export function Models() {
  const session = useCurrentSession();
  const mayRead = can(session.role, 'llmProviders.read');
  const mayManage = can(session.role, 'workspace.update');
  const providers = useLoad(
    () => (mayRead ? models.listLlmProviders() : Promise.resolve({ providers: [] })),
    [session.workspace.id, mayRead],
  );
  const refresh = useAction(async (name: string) => {
    await models.refreshLlmProviderModels(name);
    providers.reload();
  });
  const remove = useAction(async (name: string) => {
    await models.deleteLlmProvider(name);
    providers.reload();
  });
  const actions: Column<Row> = {
    label: 'Actions',
    hiddenLabel: true,
    cell: (p) => (
      <>
        <button
          type="button"
          class="secondary small"
          disabled={refresh.busy}
          onClick={() => void refresh.run(p.name)}
        >
          Read models again
        </button>{' '}
        <ConfirmButton
          class="small"
          label="Delete"
          confirm={`Remove ${p.name}? Bots that chose its models go back to the server’s.`}
          busy={remove.busy}
          onConfirm={() => void remove.run(p.name)}
        />
      </>
    ),
  };
  return (
    <>
      <PageHeader
        title="Models"
        subtitle={
          <>
            The workspace’s own OpenAI-compatible providers: bots name their models{' '}
            <code>&lt;name&gt;:&lt;model&gt;</code>, and may choose them for <code>best</code> and{' '}
            <code>fast</code> in their settings. The server’s provider is <code>default</code>.
          </>
        }
      />
      {!mayRead ? (
        <EmptyState title="Not for your role">
          <p>Developers and above see the workspace’s model providers.</p>
        </EmptyState>
      ) : (
        <>
          {mayManage && <AddProvider added={providers.reload} />}
          <InlineError error={refresh.error ?? remove.error} />
          <Loaded {...providers}>
            {({ providers: items }) =>
              items.length === 0 ? (
                <EmptyState title="No providers of the workspace’s own">
                  <p>
                    {mayManage
                      ? 'Add one: Ollama, vLLM, llama.cpp’s server, OpenAI or any OpenAI-compatible endpoint.'
                      : 'An administrator of this workspace can add one.'}
                  </p>
                </EmptyState>
              ) : (
                <ListTable
                  items={items.map((p) => ({ ...p, id: p.name }))}
                  columns={[
                    { label: 'Name', cell: (p) => <code>{p.name}</code> },
                    { label: 'Base URL', cell: (p) => <code>{p.baseUrl}</code> },
                    {
                      label: 'Models',
                      wide: true,
                      cell: (p) =>
                        `${p.models.join(', ')} (${p.modelsFrom === 'declared' ? 'declared' : 'read'})`,
                    },
                    { label: 'Key', cell: (p) => (p.hasApiKey ? 'set' : 'none') },
                    ...(mayManage ? [actions] : []),
                  ]}
                />
              )
            }
          </Loaded>
        </>
      )}
    </>
  );
}
