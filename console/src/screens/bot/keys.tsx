// A bot's API keys: what its code and integrations use on the Runtime API. A new key's value is shown
// once; a revoked key stops working at once.
import { useState } from 'preact/hooks';
import { admin } from '../../api/admin.ts';
import { adminFields } from '../../api/client.ts';
import type { BotApiKey, NewBotApiKey } from '../../api/types.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import {
  ConfirmButton,
  EmptyState,
  Field,
  InlineError,
  ListTable,
  Loaded,
  ShownOnce,
  Time,
  valueOf,
} from '../../ui/components.tsx';
import type { Column } from '../../ui/components.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';

export function Keys({ bot }: BotScreenProps) {
  const session = useCurrentSession();
  const mayManage = can(session.role, 'botKeys.manage');
  const keys = useLoad(() => admin.listBotApiKeys(bot.id), [bot.id]);
  const [note, setNote] = useState('');
  const [created, setCreated] = useState<NewBotApiKey | undefined>(undefined);
  const create = useAction(async () => {
    const key = await admin.createBotApiKey(bot.id, note.trim());
    setCreated(key);
    setNote('');
    keys.reload();
  });
  const revoke = useAction(async (keyId: string) => {
    await admin.deleteBotApiKey(keyId);
    keys.set((current) => current && { baks: current.baks.filter((k) => k.id !== keyId) });
  });

  const revokeColumn: Column<BotApiKey> = {
    label: 'Actions',
    hiddenLabel: true,
    cell: (key) => (
      <ConfirmButton
        class="small"
        label="Revoke"
        confirm="Revoke this key?"
        busy={revoke.busy}
        onConfirm={() => void revoke.run(key.id)}
      />
    ),
  };

  return (
    <section aria-label="API keys">
      <p class="muted">
        A bot API key lets code act as this bot on the Runtime API (
        <code>Authorization: Bearer &lt;key&gt;</code> and <code>x-bot-id: {bot.id}</code>).
      </p>
      {created && (
        <ShownOnce
          label={`Key ${created.note || created.id}`}
          value={created.value}
          onDone={() => setCreated(undefined)}
        />
      )}
      {mayManage && (
        <form
          class="panel inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <Field label="Note">
            <input
              value={note}
              maxLength={adminFields.keyNote}
              placeholder="what uses it, e.g. production"
              onInput={(e) => setNote(valueOf(e))}
            />
          </Field>
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
          <InlineError error={create.error} />
        </form>
      )}
      <InlineError error={revoke.error} />
      <Loaded {...keys}>
        {({ baks }) =>
          baks.length === 0 ? (
            <EmptyState title="No API keys">
              <p>
                {mayManage
                  ? 'Create one for the code or integration that calls the Runtime API as this bot.'
                  : 'A developer of this workspace can create one.'}
              </p>
            </EmptyState>
          ) : (
            <ListTable
              items={baks}
              columns={[
                { label: 'Note', cell: (key) => key.note || <span class="muted">no note</span> },
                { label: 'Created', cell: (key) => <Time iso={key.createdAt} /> },
                { label: 'Id', wide: true, cell: (key) => <code>{key.id}</code> },
                ...(mayManage ? [revokeColumn] : []),
              ]}
            />
          )
        }
      </Loaded>
    </section>
  );
}
