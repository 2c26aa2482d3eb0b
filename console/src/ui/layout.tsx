// The frame of every signed-in screen: where the operator is (workspace, role), where they can go, and
// a way out. A skip link and landmarks make it usable by keyboard and screen reader; it wraps on phones.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { paths } from '../paths.ts';
import { useCurrentSession } from '../session.tsx';
import { InlineError, valueOf } from './components.tsx';
import { useAction } from '../hooks.ts';
import { QueueBadge, QueueProvider } from '../screens/inbox/queue.tsx';

const NAV = [
  { href: paths.bots, label: 'Bots' },
  { href: paths.inbox, label: 'Inbox' },
  { href: paths.models, label: 'Models' },
  { href: paths.members, label: 'Members' },
  { href: paths.tokens, label: 'Tokens' },
];

export function Layout({ children }: { children: ComponentChildren }) {
  // The handoff queue is read for every screen: the navigation counts what waits.
  return (
    <QueueProvider>
      <Frame>{children}</Frame>
    </QueueProvider>
  );
}

function Frame({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const session = useCurrentSession();
  const switching = useAction((id: string) => session.switchWorkspace(id));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={paths.bots}>
          Parley <span>console</span>
        </a>
        <nav aria-label="Main">
          {NAV.map((item) => (
            <a
              key={item.href}
              href={item.href}
              aria-current={path.startsWith(item.href) ? 'page' : undefined}
            >
              {item.label}
              {item.href === paths.inbox && <QueueBadge />}
            </a>
          ))}
        </nav>
        <div class="who">
          {session.workspaces.length > 1 ? (
            <select
              aria-label="Workspace"
              value={session.workspace.id}
              disabled={switching.busy}
              onChange={(e) => void switching.run(valueOf(e))}
            >
              {session.workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          ) : (
            <span class="workspace">{session.workspace.name}</span>
          )}
          <span class="role" title={session.account.email}>
            {session.role}
          </span>
          <button type="button" class="secondary small" onClick={() => session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <InlineError error={switching.error} />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
