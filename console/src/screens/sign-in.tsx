import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError } from '../api/http.ts';
import type { Workspace } from '../api/types.ts';
import { paths } from '../paths.ts';
import { loadSession, useSessionState } from '../session.tsx';
import { Field, InlineError, Problem, valueOf } from '../ui/components.tsx';
import { useAction } from '../hooks.ts';

/** Where to go after signing in: a console address the operator was sent away from, or the bots. */
function nextOf(query: Record<string, string>): string {
  const next = query.next;
  return next && next.startsWith(`${paths.root}/`) && !next.startsWith(paths.signIn) ? next : paths.bots;
}

export function SignIn() {
  const { route, query } = useLocation();
  const { signIn, notice } = useSessionState();
  const [token, setToken] = useState('');
  const [choices, setChoices] = useState<Workspace[] | undefined>(undefined);
  const [workspaceId, setWorkspaceId] = useState('');
  const attempt = useAction(async () => {
    const loaded = await loadSession(token.trim(), workspaceId || undefined).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 401)
        throw new Problem('This token is not accepted', err.message);
      throw err;
    });
    if (Array.isArray(loaded)) {
      if (loaded.length === 0)
        throw new Problem('No workspace', 'This account is a member of no workspace yet.');
      setChoices(loaded);
      setWorkspaceId(loaded[0]?.id ?? '');
      return;
    }
    signIn(loaded);
    route(nextOf(query), true);
  });

  return (
    <main id="main" class="sign-in">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void attempt.run();
        }}
      >
        <h1>
          Parley <span>console</span>
        </h1>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <Field
          label="Personal access token"
          hint={
            <>
              Printed at the server's first start, or made with <code>parley token create</code>. Kept in this
              tab only, until you sign out or close it.
            </>
          }
        >
          <input
            type="password"
            name="token"
            autoComplete="off"
            spellcheck={false}
            required
            autoFocus
            value={token}
            onInput={(e) => {
              setToken(valueOf(e));
              setChoices(undefined);
              setWorkspaceId('');
            }}
          />
        </Field>
        {choices && (
          <Field label="Workspace">
            <select name="workspace" value={workspaceId} onChange={(e) => setWorkspaceId(valueOf(e))}>
              {choices.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <button type="submit" disabled={attempt.busy || token.trim() === ''}>
          {attempt.busy ? 'Signing in…' : choices ? 'Open workspace' : 'Sign in'}
        </button>
        <InlineError error={attempt.error} />
      </form>
    </main>
  );
}
