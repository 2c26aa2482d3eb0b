// The signed-in operator: a personal access token kept in this tab's session storage (sent as a bearer
// token: no cookie, so nothing for another site to ride on), the workspace they act in and their role.
import { createContext } from 'preact';
import type { ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { admin } from './api/admin.ts';
import { ApiError, setSessionCredentials } from './api/http.ts';
import type { Credentials } from './api/http.ts';
import type { Account, Role, Workspace } from './api/types.ts';
import { paths } from './paths.ts';

const STORAGE_KEY = 'parley.console.session';
// Why this tab was signed out, kept with the tab so that a reload (or a link opened in it) still says why.
const NOTICE_KEY = 'parley.console.notice';

export interface Session {
  token: string;
  account: Account;
  workspaces: Workspace[];
  workspace: Workspace;
  role: Role;
}

interface SessionState {
  session: Session | undefined;
  /** Why the operator was sent to sign in, shown there. */
  notice: string | undefined;
  restoring: boolean;
  /** Why the stored session could not be restored, when it was not refused (the network, the server). */
  restoreError: unknown;
  signIn: (session: Session) => void;
  signOut: (notice?: string) => void;
  /** Reads the operator's role again (after the server refused something the console thought allowed). */
  refreshRole: () => Promise<void>;
  switchWorkspace: (workspaceId: string) => Promise<void>;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSessionState outside SessionProvider');
  return state;
}

/** The session of a signed-in screen (they render only with one). */
export function useCurrentSession(): Session & SessionState {
  const state = useSessionState();
  if (!state.session) throw new Error('no session');
  return { ...state, ...state.session };
}

function stored(): Credentials | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Credentials | null;
    return value && typeof value.token === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Everything a session needs from the server, for a token and (if it has several) a workspace. */
export async function loadSession(token: string, workspaceId?: string): Promise<Session | Workspace[]> {
  const { account } = await admin.getAccount({ token });
  const { workspaces } = await admin.listWorkspaces({ token });
  const workspace =
    workspaces.find((w) => w.id === workspaceId) ?? (workspaces.length === 1 ? workspaces[0] : undefined);
  if (!workspace) return workspaces;
  const member = await admin.getWorkspaceMember({ token, workspaceId: workspace.id });
  return { token, account, workspaces, workspace, role: member.role };
}

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const { route } = useLocation();
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(
    () => sessionStorage.getItem(NOTICE_KEY) ?? undefined,
  );
  const [restoring, setRestoring] = useState(() => stored() !== undefined);
  const [restoreError, setRestoreError] = useState<unknown>(undefined);

  /** Shows the sign-in's reason, and keeps it with the tab (none: forgets it). */
  const showNotice = useCallback((message: string | undefined) => {
    if (message) sessionStorage.setItem(NOTICE_KEY, message);
    else sessionStorage.removeItem(NOTICE_KEY);
    setNotice(message);
  }, []);

  const signOut = useCallback(
    (message?: string) => {
      // The reason is kept before the credentials go: a document of this tab loading now (a link opened
      // as a request was refused) finds the credentials, and their refusal, or else the reason.
      showNotice(message);
      sessionStorage.removeItem(STORAGE_KEY);
      setSessionCredentials(undefined);
      setSession(undefined);
      const here = window.location.pathname + window.location.search;
      const next = here.startsWith(paths.signIn) ? '' : `?next=${encodeURIComponent(here)}`;
      route(`${paths.signIn}${message ? next : ''}`, true);
    },
    [route, showNotice],
  );

  const signIn = useCallback(
    (next: Session) => {
      sessionStorage.setItem(
        STORAGE_KEY,
        JSON.stringify({ token: next.token, workspaceId: next.workspace.id }),
      );
      showNotice(undefined);
      setSession(next);
    },
    [showNotice],
  );

  useEffect(() => {
    const credentials = stored();
    if (!credentials) return;
    loadSession(credentials.token, credentials.workspaceId)
      .then((loaded) => {
        if (Array.isArray(loaded)) signOut('Choose a workspace to go on');
        else signIn(loaded);
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) signOut(`Signed out: ${err.message}`);
        else setRestoreError(err);
      })
      .finally(() => setRestoring(false));
    // Restores once, on load.
  }, []);

  const refreshRole = useCallback(async () => {
    if (!session) return;
    const member = await admin.getWorkspaceMember();
    setSession({ ...session, role: member.role });
  }, [session]);

  const switchWorkspace = useCallback(
    async (workspaceId: string) => {
      if (!session) return;
      const loaded = await loadSession(session.token, workspaceId);
      if (!Array.isArray(loaded)) {
        signIn(loaded);
        route(paths.bots);
      }
    },
    [session, signIn, route],
  );

  // Every request of the session carries its token; a 401 anywhere ends it. Set while rendering, not in
  // an effect: the screens below fetch in their own effects, which run before this component's.
  if (session) {
    setSessionCredentials(
      { token: session.token, workspaceId: session.workspace.id },
      {
        ended: (error: ApiError) => signOut(`Signed out: ${error.message}`),
        // The console showed something the role may not do: the role changed since it was read.
        forbidden: () => void refreshRole().catch(() => undefined),
      },
    );
  }

  const value = useMemo(
    () => ({ session, notice, restoring, restoreError, signIn, signOut, refreshRole, switchWorkspace }),
    [session, notice, restoring, restoreError, signIn, signOut, refreshRole, switchWorkspace],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
