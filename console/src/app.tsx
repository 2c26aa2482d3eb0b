import { useEffect } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { paths } from './paths.ts';
import { SessionProvider, useSessionState } from './session.tsx';
import { Bots } from './screens/bots.tsx';
import { BOT_SECTIONS } from './screens/bot/sections.tsx';
import { BotShell } from './screens/bot/shell.tsx';
import { Transcript } from './screens/bot/transcript.tsx';
import { HandoffScreen } from './screens/inbox/handoff.tsx';
import { Inbox } from './screens/inbox/inbox.tsx';
import { Members } from './screens/members.tsx';
import { Models } from './screens/models.tsx';
import { SignIn } from './screens/sign-in.tsx';
import { Tokens } from './screens/tokens.tsx';
import { EmptyState, ErrorView, Loading } from './ui/components.tsx';
import { Layout } from './ui/layout.tsx';

function Redirect({ to }: { to: string }) {
  const { route } = useLocation();
  useEffect(() => route(to, true), [to]);
  return null;
}

function NotFound() {
  return (
    <EmptyState title="Nothing here">
      <p>
        This address is not a page of the console. Go to the <a href={paths.bots}>bots</a>.
      </p>
    </EmptyState>
  );
}

function BotPage({ botId, section = '' }: { botId: string; section?: string }) {
  const found = BOT_SECTIONS.find((s) => s.segment === section);
  if (!found) return <NotFound />;
  const Section = found.component;
  return (
    <BotShell botId={botId} section={section}>
      {(screen) => <Section {...screen} />}
    </BotShell>
  );
}

function TranscriptPage({ botId, conversationId }: { botId: string; conversationId: string }) {
  return (
    <BotShell botId={botId} section="conversations">
      {(screen) => <Transcript {...screen} conversationId={conversationId} />}
    </BotShell>
  );
}

function Screens() {
  const { session, restoring, restoreError } = useSessionState();
  const { path, url } = useLocation();
  if (path === paths.signIn) return session ? <Redirect to={paths.bots} /> : <SignIn />;
  if (restoreError !== undefined) {
    return (
      <main id="main" class="sign-in">
        <ErrorView error={restoreError} retry={() => window.location.reload()} />
      </main>
    );
  }
  if (restoring) return <Loading what="Signing in" />;
  if (!session) return <Redirect to={`${paths.signIn}?next=${encodeURIComponent(url)}`} />;
  return (
    <Layout>
      <Router>
        <Route path={paths.root} component={() => <Redirect to={paths.bots} />} />
        <Route path={`${paths.root}/`} component={() => <Redirect to={paths.bots} />} />
        <Route path={paths.bots} component={Bots} />
        <Route path={`${paths.bots}/:botId`} component={BotPage} />
        <Route path={`${paths.bots}/:botId/conversations/:conversationId`} component={TranscriptPage} />
        <Route path={`${paths.bots}/:botId/:section`} component={BotPage} />
        <Route path={paths.models} component={Models} />
        <Route path={paths.members} component={Members} />
        <Route path={paths.tokens} component={Tokens} />
        <Route path={paths.inbox} component={Inbox} />
        <Route path={`${paths.inbox}/:botId/:handoffId`} component={HandoffScreen} />
        <Route default component={NotFound} />
      </Router>
    </Layout>
  );
}

export function App() {
  return (
    <LocationProvider scope={paths.root}>
      <SessionProvider>
        <Screens />
      </SessionProvider>
    </LocationProvider>
  );
}
