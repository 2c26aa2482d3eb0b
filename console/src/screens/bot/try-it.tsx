// Talking to the bot as an end user would, over its Chat API channel: a user and a conversation of
// their own, made at the first message, and the bot's replies as they stream in.
import { useEffect, useRef, useState } from 'preact/hooks';
import { listen, sendText, startChat } from '../../api/chat.ts';
import type { ChatSession } from '../../api/chat.ts';
import { runtime } from '../../api/runtime.ts';
import type { ChatMessage } from '../../api/types.ts';
import { paths } from '../../paths.ts';
import { EmptyState, InlineError, valueOf } from '../../ui/components.tsx';
import { Payload } from '../../ui/payload.tsx';
import { useAction } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';

export function TryIt({ bot }: BotScreenProps) {
  const channel = bot.integrations.chat;
  const [chat, setChat] = useState<ChatSession | undefined>(undefined);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [text, setText] = useState('');
  const [transcript, setTranscript] = useState<string | undefined>(undefined);
  const [listenError, setListenError] = useState<unknown>(undefined);

  // The conversation's stream, for as long as the panel is open; it reconnects after a drop.
  useEffect(() => {
    if (!chat) return;
    const stop = new AbortController();
    // From the conversation's start: the first message is sent before the stream opens.
    const position = { lastEventId: 0 };
    const add = (message: ChatMessage) =>
      setMessages((all) => (all.some((m) => m.id === message.id) ? all : [...all, message]));
    const run = async () => {
      while (!stop.signal.aborted) {
        try {
          await listen(chat, add, stop.signal, position);
          setListenError(undefined);
        } catch (err) {
          if (stop.signal.aborted) return;
          setListenError(err);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    void run();
    return () => stop.abort();
  }, [chat]);

  /** Sends `said`: what was typed, or the value of a choice clicked in a reply. */
  const send = useAction(async (said: string, typed: boolean) => {
    if (!channel) return;
    const session = chat ?? (await startChat(channel.webhookId));
    if (!chat) setChat(session);
    const message = await sendText(session, said);
    setMessages((all) => (all.some((m) => m.id === message.id) ? all : [...all, message]));
    if (typed) setText('');
    if (!transcript) {
      // Chat API ids are the end user's; the message id is shared, and leads to the Runtime conversation.
      const { message: stored } = await runtime.getMessage(bot.id, message.id);
      setTranscript(stored.conversationId);
    }
  });

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [messages.length]);

  if (!channel || !channel.enabled) {
    return (
      <EmptyState title="The chat channel is off">
        <p>Turn it on in the bot's settings to talk to it here.</p>
      </EmptyState>
    );
  }
  return (
    <section class="try-it" aria-label="Try it">
      <p class="muted">
        You talk to the bot as a new end user, through its Chat API channel.
        {!bot.deployedAt && ' This bot has no code deployed: it will not answer.'}{' '}
        {transcript && (
          <a href={paths.conversation(bot.id, transcript)}>Open this conversation's transcript</a>
        )}
      </p>
      <ol class="chat" aria-live="polite" aria-label="Messages">
        {messages.map((m) => {
          const fromMe = chat !== undefined && m.userId === chat.userId;
          return (
            <li key={m.id} class={`bubble ${fromMe ? 'from-user' : 'from-bot'}`}>
              <span class="who">{fromMe ? 'You' : 'Bot'}</span>
              <Payload
                type={typeof m.payload.type === 'string' ? m.payload.type : 'unknown'}
                payload={m.payload}
                // A choice of the bot's is answered with its value, as the webchat answers it.
                {...(!fromMe && { onChoose: (value: string) => void send.run(value, false) })}
              />
            </li>
          );
        })}
      </ol>
      <div ref={end} />
      {listenError !== undefined && <InlineError error={listenError} />}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) void send.run(text, true);
        }}
      >
        <input
          aria-label="Message"
          placeholder="Write a message…"
          value={text}
          autoFocus
          maxLength={4000}
          onInput={(e) => setText(valueOf(e))}
        />
        <button type="submit" disabled={send.busy || text.trim() === ''}>
          Send
        </button>
      </form>
      <InlineError error={send.error} />
    </section>
  );
}
