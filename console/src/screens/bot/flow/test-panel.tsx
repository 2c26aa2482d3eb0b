// The Flow tab's test panel: a developer talks to the draft as the editor holds it, not to the deployed
// bot. The first message (and the first after a change) runs the files through startBotDraftTest, which
// redeploys the bot's draft twin, then the conversation goes through the twin's Chat API channel as the
// Try it tab's does. Each reply shows under its turn with what the turn ran (listBotDraftTestTurns): its
// path of nodes and cards, the variables after it, its model and tool calls folded as in the transcript.
import { useEffect, useRef, useState } from 'preact/hooks';
import { admin } from '../../../api/admin.ts';
import { sendText, startChat } from '../../../api/chat.ts';
import type { ChatSession } from '../../../api/chat.ts';
import type { ChatMessage, DraftTestStep, DraftTestTurn } from '../../../api/types.ts';
import { useAction, usePolling } from '../../../hooks.ts';
import { InlineError } from '../../../ui/components.tsx';
import { ChatBubble, Composer, useChatStream } from '../chat-stream.tsx';
import { CallsRow, LogLines } from '../transcript.tsx';
import type { Files } from './draft-model.ts';

const POLL_MS = 1000;

/** Where a test conversation stands: the last node its last turn was at. */
export interface TestPosition {
  workflow: string;
  node: string;
}

/**
 * A turn's path: the nodes it went through in order, each with the cards it ran (`start → menu (#0 say,
 * #1 capture)`), the workflow named where it changes.
 */
export function pathOf(steps: DraftTestStep[]): string {
  const visits: { workflow: string; node: string; cards: string[] }[] = [];
  for (const step of steps) {
    let last = visits[visits.length - 1];
    if (!last || last.workflow !== step.workflow || last.node !== step.node || step.card === 0) {
      last = { workflow: step.workflow, node: step.node, cards: [] };
      visits.push(last);
    }
    if (step.card !== undefined) last.cards.push(`#${step.card} ${step.cardType ?? 'card'}`);
  }
  return visits
    .map((v, i) => {
      const name = i === 0 || visits[i - 1]?.workflow !== v.workflow ? `${v.workflow}: ${v.node}` : v.node;
      return v.cards.length > 0 ? `${name} (${v.cards.join(', ')})` : name;
    })
    .join(' → ');
}

export function TestPanel(props: {
  botId: string;
  files: Files;
  /** The draft has problems: it cannot run. */
  blocked: boolean;
  onPosition: (at: TestPosition | undefined) => void;
}) {
  // A new conversation is a new component: its stream, its turns and its user start afresh.
  const [round, setRound] = useState(0);
  return (
    <aside class="test-panel" aria-label="Test the draft">
      <header>
        <h2>Test the draft</h2>
        <button
          type="button"
          class="small secondary"
          onClick={() => {
            setRound(round + 1);
            props.onPosition(undefined);
          }}
        >
          New conversation
        </button>
      </header>
      <p class="muted">
        You talk to the draft as it is in the editor, not to the deployed bot, whose conversations go on with
        its deployed version. A message after a change runs the changed draft.
      </p>
      <TestConversation key={round} {...props} />
    </aside>
  );
}

function TestConversation(props: Parameters<typeof TestPanel>[0]) {
  const { botId, files, blocked, onPosition } = props;
  const [chat, setChat] = useState<ChatSession | undefined>(undefined);
  /** The files the twin runs, as last sent (the editor replaces its files object at each change). */
  const [tested, setTested] = useState<Files | undefined>(undefined);
  const [firstMessage, setFirstMessage] = useState<string | undefined>(undefined);
  const [turns, setTurns] = useState<DraftTestTurn[]>([]);
  const [text, setText] = useState('');
  const stream = useChatStream(chat);

  const send = useAction(async (said: string, typed: boolean) => {
    let session = chat;
    if (!session || tested !== files) {
      const { webhookId } = await admin.startBotDraftTest(botId, files);
      setTested(files);
      session ??= await startChat(webhookId);
      setChat(session);
    }
    const message = await sendText(session, said);
    stream.add(message);
    setFirstMessage((first) => first ?? message.id);
    if (typed) setText('');
  });

  const pollError = usePolling(
    async (signal) => {
      if (firstMessage === undefined) return;
      const answer = await admin.listBotDraftTestTurns(botId, firstMessage, signal);
      if (signal.aborted) return;
      setTurns((current) =>
        JSON.stringify(current) === JSON.stringify(answer.turns) ? current : answer.turns,
      );
    },
    POLL_MS,
    firstMessage !== undefined,
  );

  const last = turns[turns.length - 1]?.steps.at(-1);
  useEffect(
    () => onPosition(last && { workflow: last.workflow, node: last.node }),
    [last?.workflow, last?.node],
  );

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [stream.messages.length, turns.length]);

  const byId = new Map(stream.messages.map((m) => [m.id, m]));
  const shown = new Set(turns.flatMap((t) => [t.messageId, ...t.replyIds]));
  const waiting = stream.messages.filter((m) => !shown.has(m.id));
  const bubble = (m: ChatMessage) => (
    <ChatBubble
      key={m.id}
      message={m}
      fromMe={m.userId === chat?.userId}
      onChoose={(value) => void send.run(value, false)}
    />
  );
  return (
    <>
      <ol class="test-turns" aria-label="Test turns">
        {turns.map((turn) => (
          <li key={turn.eventId} class="test-turn" data-event-id={turn.eventId}>
            <ol class="chat">
              {[turn.messageId, ...turn.replyIds].flatMap((id) => {
                const m = id === undefined ? undefined : byId.get(id);
                return m ? [bubble(m)] : [];
              })}
            </ol>
            <p class="test-path" aria-label="Path of this turn">
              {turn.steps.length > 0 ? pathOf(turn.steps) : 'no workflow ran'}
            </p>
            {turn.error !== undefined && (
              <p class="turn-failed" role="note">
                <strong>Turn failed:</strong> {turn.error}
              </p>
            )}
            <CallsRow calls={turn.logs.filter((l) => l.call)} />
            <details class="test-variables">
              <summary>Variables after this turn</summary>
              <Variables turn={turn} />
            </details>
            {turn.logs.some((l) => !l.call) && <LogLines logs={turn.logs.filter((l) => !l.call)} />}
          </li>
        ))}
      </ol>
      {waiting.length > 0 && <ol class="chat">{waiting.map(bubble)}</ol>}
      <div ref={end} />
      <InlineError error={stream.error ?? pollError} />
      {blocked ? (
        <p class="muted">Fix the draft’s problems to test it.</p>
      ) : (
        <Composer text={text} onText={setText} busy={send.busy} onSend={() => void send.run(text, true)} />
      )}
      <InlineError error={send.error} />
    </>
  );
}

function Variables({ turn }: { turn: DraftTestTurn }) {
  const { conversation, user, workflow, workflowName } = turn.variables;
  const scopes: [string, object][] = [
    ['conversation', conversation],
    ['user', user],
    [workflowName === undefined ? 'workflow' : `workflow (${workflowName})`, workflow],
  ];
  return (
    <dl class="test-variable-list">
      {scopes.flatMap(([name, values]) => [
        <dt key={`${name}-name`}>{name}</dt>,
        <dd key={`${name}-values`}>
          <code>{JSON.stringify(values)}</code>
        </dd>,
      ])}
    </dl>
  );
}
