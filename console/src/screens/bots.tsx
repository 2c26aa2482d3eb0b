import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { admin } from '../api/admin.ts';
import { adminFields, MAX_LISTED } from '../api/client.ts';
import { collect } from '../../../src/contract/client.ts';
import { paths } from '../paths.ts';
import { can } from '../roles.ts';
import { useCurrentSession } from '../session.tsx';
import {
  EmptyState,
  Field,
  InlineError,
  ListTable,
  Loaded,
  PageHeader,
  Tags,
  Time,
  valueOf,
} from '../ui/components.tsx';
import { useAction, useLoad } from '../hooks.ts';

export function Bots() {
  const session = useCurrentSession();
  const { route } = useLocation();
  const bots = useLoad(() => collect(admin.listBots, 'bots', {}, MAX_LISTED), [session.workspace.id]);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const { bot } = await admin.createBot({ name: name.trim() });
    route(paths.bot(bot.id));
  });
  const mayWrite = can(session.role, 'bots.write');

  return (
    <>
      <PageHeader
        title="Bots"
        subtitle={`Workspace ${session.workspace.name}`}
        actions={
          mayWrite && !creating ? (
            <button type="button" onClick={() => setCreating(true)}>
              New bot
            </button>
          ) : undefined
        }
      />
      {creating && !mayWrite && <InlineError error={create.error} />}
      {creating && mayWrite && (
        <form
          class="panel inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <Field label="Name">
            <input
              value={name}
              required
              autoFocus
              maxLength={adminFields.botName}
              onInput={(e) => setName(valueOf(e))}
            />
          </Field>
          <button type="submit" disabled={create.busy || name.trim() === ''}>
            Create bot
          </button>
          <button type="button" class="secondary" onClick={() => (setCreating(false), create.clear())}>
            Cancel
          </button>
          <InlineError error={create.error} />
        </form>
      )}
      <Loaded {...bots}>
        {({ items }) =>
          items.length === 0 ? (
            <EmptyState title="No bots yet">
              <p>Deploy one from a bot folder with the CLI (an example ships in the repository):</p>
              <pre>
                {`export PARLEY_URL=${window.location.origin} PARLEY_TOKEN=<your token> PARLEY_WORKSPACE_ID=${session.workspace.id}
npm run parley -- deploy examples/echo-bot`}
              </pre>
              {mayWrite && <p>Or create an empty bot with “New bot” and deploy code to it later.</p>}
            </EmptyState>
          ) : (
            <ListTable
              items={items}
              columns={[
                {
                  label: 'Name',
                  cell: (bot) => (
                    <>
                      <a href={paths.bot(bot.id)}>{bot.name}</a>
                      <Tags tags={bot.tags} />
                    </>
                  ),
                },
                {
                  label: 'Status',
                  // The status the API gives; a bot without code is active but answers nothing.
                  cell: (bot) => (
                    <>
                      <span class={`status status-${bot.status}`}>{bot.status}</span>
                      {!bot.deployedAt && <span class="badge"> no code deployed</span>}
                    </>
                  ),
                },
                { label: 'Deployed', cell: (bot) => <Time iso={bot.deployedAt} /> },
                { label: 'Created', wide: true, cell: (bot) => <Time iso={bot.createdAt} /> },
                { label: 'Id', wide: true, cell: (bot) => <code>{bot.id}</code> },
              ]}
            />
          )
        }
      </Loaded>
    </>
  );
}
