// A conversation of the Chat API as its end user sees it, shared by the panels that talk to a bot (try-it.tsx)
// or to its draft (flow/test-panel.tsx): the messages as they stream in, and each drawn as a bubble.
import { useEffect, useState } from 'preact/hooks';
import { listen } from '../../api/chat.ts';
import type { ChatSession } from '../../api/chat.ts';
import type { ChatMessage } from '../../api/types.ts';
import { valueOf } from '../../ui/components.tsx';
import { Payload } from '../../ui/payload.tsx';

/**
 * The conversation's messages, from its start, while `chat` is set: its stream reconnects after a drop
 * (`error` tells of the last one). `add` puts in a message sent, without waiting for the stream.
 */
export function useChatStream(chat: ChatSession | undefined) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const add = (message: ChatMessage) =>
    setMessages((all) => (all.some((m) => m.id === message.id) ? all : [...all, message]));
  useEffect(() => {
    if (!chat) return;
    const stop = new AbortController();
    // From the conversation's start: the first message is sent before the stream opens.
    const position = { lastEventId: 0 };
    const run = async () => {
      while (!stop.signal.aborted) {
        try {
          await listen(chat, add, stop.signal, position);
          setError(undefined);
        } catch (err) {
          if (stop.signal.aborted) return;
          setError(err);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    void run();
    return () => stop.abort();
  }, [chat]);
  return { messages, add, error };
}

/** One message as a bubble; a choice in the bot's is answered with its value, as the webchat answers it. */
export function ChatBubble(props: {
  message: ChatMessage;
  fromMe: boolean;
  onChoose: (value: string) => void;
}) {
  const { message, fromMe } = props;
  return (
    <li class={`bubble ${fromMe ? 'from-user' : 'from-bot'}`} data-message-id={message.id}>
      <span class="who">{fromMe ? 'You' : 'Bot'}</span>
      <Payload
        type={typeof message.payload.type === 'string' ? message.payload.type : 'unknown'}
        payload={message.payload}
        {...(!fromMe && { onChoose: props.onChoose })}
      />
    </li>
  );
}

/** The line a message is written on, sent with Enter or its button (`text` is the caller's, to clear). */
export function Composer(props: {
  text: string;
  onText: (text: string) => void;
  busy: boolean;
  onSend: () => void;
  autoFocus?: boolean;
}) {
  const { text } = props;
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) props.onSend();
      }}
    >
      <input
        aria-label="Message"
        placeholder="Write a message…"
        value={text}
        autoFocus={props.autoFocus ?? false}
        maxLength={4000}
        onInput={(e) => props.onText(valueOf(e))}
      />
      <button type="submit" disabled={props.busy || text.trim() === ''}>
        Send
      </button>
    </form>
  );
}
