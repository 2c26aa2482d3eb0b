// A bot's own `best` and `fast`: any model of the server's provider or of the workspace's, over the
// server's choice.
import { useState } from 'preact/hooks';
import { models } from '../../api/models.ts';
import type { BotModels } from '../../api/models.ts';
import { Field, InlineError, Loaded, valueOf } from '../../ui/components.tsx';
import { useAction, useLoad } from '../../hooks.ts';

const SERVER = '';

function Choice(props: {
  bot: string;
  current: BotModels;
  mayWrite: boolean;
  saved: (next: BotModels) => void;
}) {
  const [best, setBest] = useState(props.current.best ?? SERVER);
  const [fast, setFast] = useState(props.current.fast ?? SERVER);
  const [done, setDone] = useState(false);
  const save = useAction(async () => {
    const next = await models.updateBotModels(props.bot, {
      best: best === SERVER ? null : best,
      fast: fast === SERVER ? null : fast,
    });
    props.saved(next);
    setDone(true);
  });
  const select = (label: string, value: string, set: (v: string) => void) => (
    <Field label={label}>
      <select
        value={value}
        disabled={!props.mayWrite}
        onChange={(e) => {
          setDone(false);
          set(valueOf(e));
        }}
      >
        <option value={SERVER}>The server’s</option>
        {props.current.available.map((ref) => (
          <option key={ref} value={ref}>
            {ref}
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      {select('Best (and auto)', best, setBest)}
      {select('Fast', fast, setFast)}
      {props.mayWrite && (
        <button type="submit" disabled={save.busy}>
          Save models
        </button>
      )}
      {done && <span role="status">Saved.</span>}
      <InlineError error={save.error} />
    </form>
  );
}

export function ModelsChoice({ botId, mayWrite }: { botId: string; mayWrite: boolean }) {
  const choices = useLoad(() => models.getBotModels(botId), [botId]);
  return (
    <section class="panel" aria-labelledby="models-title">
      <h2 id="models-title">Models</h2>
      <p class="muted">
        What <code>best</code>, <code>auto</code> and <code>fast</code> name in the bot’s model calls. Add
        providers of the workspace’s own under Models.
      </p>
      <Loaded {...choices}>
        {(current) => (
          <Choice
            bot={botId}
            current={current}
            mayWrite={mayWrite}
            saved={(next) => choices.set(() => next)}
          />
        )}
      </Loaded>
    </section>
  );
}
