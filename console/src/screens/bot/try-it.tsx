// Talking to the bot as an end user would, over its Chat API channel: a user and a conversation of
// their own, made at the first message, and the bot's replies as they stream in.
import { useEffect, useRef, useState } from 'preact/hooks';
import { sendText, startChat } from '../../api/chat.ts';
import type { ChatSession } from '../../api/chat.ts';
import { runtime } from '../../api/runtime.ts';
import { paths } from '../../paths.ts';
import { EmptyState, InlineError } from '../../ui/components.tsx';
import { useAction } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';
import { ChatBubble, Composer, useChatStream } from './chat-stream.tsx';

export function TryIt({ bot }: BotScreenProps) {
  const channel = bot.integrations.chat;
  const [chat, setChat] = useState<ChatSession | undefined>(undefined);
  const stream = useChatStream(chat);
  const [text, setText] = useState('');
  const [transcript, setTranscript] = useState<string | undefined>(undefined);

  /** Sends `said`: what was typed, or the value of a choice clicked in a reply. */
  const send = useAction(async (said: string, typed: boolean) => {
    if (!channel) return;
    const session = chat ?? (await startChat(channel.webhookId));
    if (!chat) setChat(session);
    const message = await sendText(session, said);
    stream.add(message);
    if (typed) setText('');
    if (!transcript) {
      // Chat API ids are the end user's; the message id is shared, and leads to the Runtime conversation.
      const { message: stored } = await runtime.getMessage(bot.id, message.id);
      setTranscript(stored.conversationId);
    }
  });

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [stream.messages.length]);

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
        {stream.messages.map((m) => (
          <ChatBubble
            key={m.id}
            message={m}
            fromMe={chat !== undefined && m.userId === chat.userId}
            onChoose={(value) => void send.run(value, false)}
          />
        ))}
      </ol>
      <div ref={end} />
      {stream.error !== undefined && <InlineError error={stream.error} />}
      <Composer
        text={text}
        onText={setText}
        busy={send.busy}
        onSend={() => void send.run(text, true)}
        autoFocus
      />
      <InlineError error={send.error} />
    </section>
  );
}
