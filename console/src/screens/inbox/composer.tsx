// The answer form of a handoff the signed-in member has: words, and optionally choices for the visitor
// to click and an image's or a file's link.
import { useState } from 'preact/hooks';
import { handoffs } from '../../api/handoffs.ts';
import type { Handoff } from '../../api/handoffs.ts';
import { useAction } from '../../hooks.ts';
import { Field, InlineError, Problem, valueOf } from '../../ui/components.tsx';
import { EMPTY_DRAFT, payloadsOf } from './compose.ts';
import type { Draft } from './compose.ts';

/** The Chat API's longest text, as the try-it panel bounds it. */
const TEXT_MAX = 4000;

export function Composer({ handoff, onSent }: { handoff: Handoff; onSent: () => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY_DRAFT);
  const [more, setMore] = useState(false);
  const edit = (field: keyof Draft) => (e: Parameters<typeof valueOf>[0]) =>
    setDraft((d) => ({ ...d, [field]: valueOf(e) }));
  const send = useAction(async () => {
    const payloads = payloadsOf(draft);
    if (!Array.isArray(payloads)) throw new Problem('Not sent', payloads.problem);
    for (const payload of payloads) await handoffs.createHandoffMessage(handoff.botId, handoff.id, payload);
    setDraft(EMPTY_DRAFT);
    setMore(false);
    onSent();
  });
  return (
    <form
      class="handoff-composer"
      aria-label="Answer"
      onSubmit={(e) => {
        e.preventDefault();
        void send.run();
      }}
    >
      <div class="composer">
        <input
          aria-label="Message"
          placeholder="Write to the visitor…"
          value={draft.text}
          maxLength={TEXT_MAX}
          autoFocus
          onInput={edit('text')}
        />
        <button type="submit" disabled={send.busy}>
          Send
        </button>
      </div>
      {more ? (
        <div class="composer-more">
          <Field label="Choices" hint="One a line: the visitor clicks one (your message is the question)">
            <textarea rows={3} value={draft.choices} onInput={edit('choices')} />
          </Field>
          <Field label="Link" hint="An image's or a file's address, sent after the message">
            <input type="url" placeholder="https://…" value={draft.link} onInput={edit('link')} />
          </Field>
        </div>
      ) : (
        <button type="button" class="secondary small" onClick={() => setMore(true)}>
          Add choices or a link
        </button>
      )}
      <InlineError error={send.error} />
    </form>
  );
}
