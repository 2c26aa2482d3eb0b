// A bot's settings: configuration variables, secrets (names only; values can be set, never read), its
// chat channel, its `best` and `fast` models, and deleting it. A role that may not change bots sees them read-only.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { admin } from '../../api/admin.ts';
import { paths } from '../../paths.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import { ConfirmButton, CopyValue, Field, InlineError, Problem, valueOf } from '../../ui/components.tsx';
import { useAction } from '../../hooks.ts';
import { ModelsChoice } from './models-choice.tsx';
import type { BotScreenProps } from './screen-props.ts';
import type { Bot } from '../../api/types.ts';

type Row = { name: string; value: string };
/** A configuration's values, as the bot's record holds them. */
type ConfigurationData = Bot['configuration']['data'];
type ConfigurationValue = ConfigurationData[string];

/** Strings are edited as they are; other values (numbers, booleans, objects) as JSON. */
const editable = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
function parsed(row: Row, original: unknown): ConfigurationValue {
  if (typeof original === 'string' || original === undefined) return row.value;
  try {
    return JSON.parse(row.value) as ConfigurationValue;
  } catch {
    throw new Problem(
      'Not saved',
      `The value of ${row.name} must be JSON, as it was (${JSON.stringify(original)})`,
    );
  }
}

function Configuration({ bot, setBot, mayWrite }: BotScreenProps & { mayWrite: boolean }) {
  const data = bot.configuration.data;
  const initial = (): Row[] =>
    Object.entries(data).map(([name, value]) => ({ name, value: editable(value) }));
  const [rows, setRows] = useState<Row[]>(initial);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    const next: ConfigurationData = {};
    for (const row of rows) if (row.name.trim()) next[row.name.trim()] = parsed(row, data[row.name.trim()]);
    const { bot: updated } = await admin.updateBot(bot.id, {
      configuration: { data: next, schema: bot.configuration.schema },
    });
    setBot(() => ({ bot: updated }));
    setSaved(true);
  });
  const change = (i: number, patch: Partial<Row>) => {
    setSaved(false);
    setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  };
  return (
    <section class="panel" aria-labelledby="config-title">
      <h2 id="config-title">Configuration variables</h2>
      <p class="muted">
        Read by the bot's code as <code>env.&lt;name&gt;</code>. A deploy keeps the values set here.
      </p>
      {rows.length === 0 && <p class="muted">No configuration variables.</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <table class="list kv">
          <tbody>
            {rows.map((row, i) => (
              <tr key={i}>
                <td>
                  {mayWrite && !(row.name in data) ? (
                    <input
                      aria-label="Name"
                      value={row.name}
                      onInput={(e) => change(i, { name: valueOf(e) })}
                    />
                  ) : (
                    <code>{row.name}</code>
                  )}
                </td>
                <td>
                  <input
                    aria-label={`Value of ${row.name || 'the new variable'}`}
                    value={row.value}
                    readOnly={!mayWrite}
                    onInput={(e) => change(i, { value: valueOf(e) })}
                  />
                </td>
                {mayWrite && (
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() => setRows(rows.filter((_, j) => j !== i))}
                    >
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        {mayWrite && (
          <div class="actions">
            <button
              type="button"
              class="secondary"
              onClick={() => setRows([...rows, { name: '', value: '' }])}
            >
              Add variable
            </button>
            <button type="submit" disabled={save.busy}>
              Save variables
            </button>
            {saved && <span role="status">Saved.</span>}
          </div>
        )}
      </form>
      <InlineError error={save.error} />
    </section>
  );
}

function Secrets({ bot, setBot, mayWrite }: BotScreenProps & { mayWrite: boolean }) {
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const change = useAction(async (secrets: Record<string, string | null>) => {
    const { bot: updated } = await admin.updateBot(bot.id, { secrets });
    setBot(() => ({ bot: updated }));
    setEditing(undefined);
    setName('');
    setValue('');
  });
  const form = (secret: string | undefined) => (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        const key = (secret ?? name).trim();
        if (key && value) void change.run({ [key]: value });
      }}
    >
      {secret === undefined && (
        <Field label="Name">
          <input
            value={name}
            required
            pattern="[A-Za-z_][A-Za-z0-9_]*"
            onInput={(e) => setName(valueOf(e))}
          />
        </Field>
      )}
      <Field label={secret ? `New value of ${secret}` : 'Value'}>
        <input
          type="password"
          autoComplete="off"
          required
          value={value}
          onInput={(e) => setValue(valueOf(e))}
        />
      </Field>
      <button type="submit" disabled={change.busy}>
        Save secret
      </button>
      <button type="button" class="secondary" onClick={() => (setEditing(undefined), setValue(''))}>
        Cancel
      </button>
    </form>
  );
  return (
    <section class="panel" aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p class="muted">
        Values never leave the server: only their names are shown. Set a new value to replace one.
      </p>
      {bot.secrets.length === 0 && <p class="muted">No secrets.</p>}
      <ul class="plain">
        {bot.secrets.map((secret) => (
          <li key={secret}>
            <code>{secret}</code>{' '}
            {mayWrite && editing !== secret && (
              <>
                <button
                  type="button"
                  class="secondary small"
                  onClick={() => (setEditing(secret), setValue(''))}
                >
                  Set new value
                </button>{' '}
                <ConfirmButton
                  class="small"
                  label="Remove"
                  confirm={`Remove ${secret}?`}
                  onConfirm={() => void change.run({ [secret]: null })}
                />
              </>
            )}
            {editing === secret && form(secret)}
          </li>
        ))}
      </ul>
      {mayWrite && editing === undefined && (
        <button type="button" class="secondary" onClick={() => (setEditing(''), setName(''), setValue(''))}>
          Add secret
        </button>
      )}
      {editing === '' && form(undefined)}
      <InlineError error={change.error} />
    </section>
  );
}

function Channel({ bot, setBot, mayWrite }: BotScreenProps & { mayWrite: boolean }) {
  const chat = bot.integrations.chat;
  const toggle = useAction(async (enabled: boolean) => {
    const { bot: updated } = await admin.updateBot(bot.id, { integrations: { chat: { enabled } } });
    setBot(() => ({ bot: updated }));
  });
  return (
    <section class="panel" aria-labelledby="channel-title">
      <h2 id="channel-title">Chat channel</h2>
      {!chat ? (
        <p class="muted">This bot has no chat channel.</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{chat.enabled ? 'on' : 'off'}</dd>
            <dt>Webhook id</dt>
            <dd>
              <CopyValue value={chat.webhookId} label="webhook id" />
            </dd>
            <dt>Chat API URL</dt>
            <dd>
              <CopyValue value={chat.webhookUrl} label="chat URL" />
            </dd>
          </dl>
          <p class="muted">
            End users and <code>@botpress/chat</code> (<code>chat.Client.connect({'{ apiUrl }'})</code>) talk
            to the bot at this URL. The webchat widget will use the same channel.
          </p>
          {mayWrite && (
            <button
              type="button"
              class="secondary"
              disabled={toggle.busy}
              onClick={() => void toggle.run(!chat.enabled)}
            >
              {chat.enabled ? 'Turn the channel off' : 'Turn the channel on'}
            </button>
          )}
          <InlineError error={toggle.error} />
        </>
      )}
    </section>
  );
}

export function Settings(props: BotScreenProps) {
  const session = useCurrentSession();
  const { route } = useLocation();
  const mayWrite = can(session.role, 'bots.write');
  const remove = useAction(async () => {
    await admin.deleteBot(props.bot.id);
    route(paths.bots);
  });
  return (
    <>
      {!mayWrite && (
        <p class="notice" role="note">
          Read only: your role ({session.role}) may not change bots.
        </p>
      )}
      <Configuration {...props} mayWrite={mayWrite} />
      <Secrets {...props} mayWrite={mayWrite} />
      <Channel {...props} mayWrite={mayWrite} />
      <ModelsChoice botId={props.bot.id} mayWrite={mayWrite} />
      {mayWrite && (
        <section class="panel danger-zone" aria-labelledby="delete-title">
          <h2 id="delete-title">Delete this bot</h2>
          <p>Deletes the bot with its conversations, messages, keys and logs. This cannot be undone.</p>
          <ConfirmButton
            label="Delete bot"
            confirm={`Delete ${props.bot.name}?`}
            busy={remove.busy}
            onConfirm={() => void remove.run()}
          />
          <InlineError error={remove.error} />
        </section>
      )}
    </>
  );
}
