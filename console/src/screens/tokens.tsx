// The operator's own personal access tokens: what the console, the CLI and scripts sign in with.
import { useState } from 'preact/hooks';
import { admin } from '../api/admin.ts';
import { adminFields } from '../api/client.ts';
import type { NewPersonalAccessToken } from '../api/types.ts';
import { useCurrentSession } from '../session.tsx';
import {
  ConfirmButton,
  Field,
  InlineError,
  ListTable,
  Loaded,
  PageHeader,
  ShownOnce,
  Time,
  valueOf,
} from '../ui/components.tsx';
import { useAction, useLoad } from '../hooks.ts';

export function Tokens() {
  const session = useCurrentSession();
  const tokens = useLoad(() => admin.listPersonalAccessTokens(), [session.account.id]);
  const [note, setNote] = useState('');
  const [created, setCreated] = useState<NewPersonalAccessToken | undefined>(undefined);
  const create = useAction(async () => {
    setCreated((await admin.createPersonalAccessToken(note.trim())).pat);
    setNote('');
    tokens.reload();
  });
  const remove = useAction(async (id: string) => {
    await admin.deletePersonalAccessToken(id);
    tokens.set((current) => current && { pats: current.pats.filter((p) => p.id !== id) });
  });
  return (
    <>
      <PageHeader
        title="Personal access tokens"
        subtitle={`Tokens of ${session.account.email}, in every workspace`}
      />
      {created && (
        <ShownOnce
          label={`Token ${created.note || created.id}`}
          value={created.value}
          onDone={() => setCreated(undefined)}
        />
      )}
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
            required
            maxLength={adminFields.tokenNote}
            placeholder="what uses it, e.g. laptop CLI"
            onInput={(e) => setNote(valueOf(e))}
          />
        </Field>
        <button type="submit" disabled={create.busy || note.trim() === ''}>
          Create token
        </button>
        <InlineError error={create.error} />
      </form>
      <InlineError error={remove.error} />
      <Loaded {...tokens}>
        {({ pats }) => (
          <ListTable
            items={pats}
            columns={[
              { label: 'Note', cell: (pat) => pat.note || <span class="muted">no note</span> },
              { label: 'Created', cell: (pat) => <Time iso={pat.createdAt} /> },
              {
                label: 'Actions',
                hiddenLabel: true,
                cell: (pat) => (
                  <ConfirmButton
                    class="small"
                    label="Delete"
                    confirm="Delete this token? Whatever uses it is signed out (this console too, if it is this one)."
                    onConfirm={() => void remove.run(pat.id)}
                  />
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
