// A bot's webhooks: the URL services call it at (its ingress), the URLs of the integrations installed on it,
// and the URLs its events are posted to (subscriptions), with how each one's last delivery went. A
// subscription's secret is shown once.
import { useState } from 'preact/hooks';
import { admin } from '../../api/admin.ts';
import { adminFields } from '../../api/client.ts';
import type { Bot, WebhookSubscription } from '../../api/types.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import {
  ConfirmButton,
  CopyValue,
  EmptyState,
  Field,
  InlineError,
  ListTable,
  Loaded,
  ShownOnce,
  Time,
  valueOf,
} from '../../ui/components.tsx';
import type { Column } from '../../ui/components.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';

function LastDelivery({ subscription }: { subscription: WebhookSubscription }) {
  const last = subscription.lastDelivery;
  if (!last) return <span class="muted">none yet</span>;
  const answer = last.statusCode !== undefined ? `HTTP ${last.statusCode}` : (last.error ?? '');
  const label = { delivered: 'Delivered', pending: 'Failed, retrying', failed: 'Given up' }[last.status];
  return (
    <span class={`delivery ${last.status}`}>
      {label} ({answer}), <Time iso={last.at} />
    </span>
  );
}

type Installation = Bot['integrations'][string];

/** Whether an installed integration answered its `register`. */
function Registration({ installation }: { installation: Installation }) {
  if (!installation.enabled) return <span class="muted">Disabled</span>;
  if (installation.status === 'registered') return <span class="delivery delivered">Registered</span>;
  if (installation.status === 'registration_failed')
    return (
      <span class="delivery failed">Register failed: {installation.statusReason ?? 'no reason given'}</span>
    );
  return <span class="muted">Registering…</span>;
}

export function Webhooks({ bot }: BotScreenProps) {
  const session = useCurrentSession();
  const mayChange = can(session.role, 'bots.write');
  const ingress = useLoad(() => admin.getBotWebhook(bot.id), [bot.id]);
  // Every entry but the built-in chat channel (`chat`, as the other screens read it) is an installation.
  const installed = Object.entries(bot.integrations)
    .filter(([key]) => key !== 'chat')
    .map(([, installation]) => installation);
  const subscriptions = useLoad(() => admin.listWebhookSubscriptions(bot.id), [bot.id]);
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState('message_created');
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const create = useAction(async () => {
    const eventTypes = types
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    const created = await admin.createWebhookSubscription(bot.id, { url: url.trim(), eventTypes });
    setSecret(created.secret);
    setUrl('');
    subscriptions.reload();
  });
  const remove = useAction(async (subscriptionId: string) => {
    await admin.deleteWebhookSubscription(bot.id, subscriptionId);
    subscriptions.set(
      (current) => current && { subscriptions: current.subscriptions.filter((s) => s.id !== subscriptionId) },
    );
  });

  const removeColumn: Column<WebhookSubscription> = {
    label: 'Actions',
    hiddenLabel: true,
    cell: (s) => (
      <ConfirmButton
        class="small"
        label="Delete"
        confirm="Stop posting events to this URL?"
        busy={remove.busy}
        onConfirm={() => void remove.run(s.id)}
      />
    ),
  };

  return (
    <section aria-label="Webhooks">
      <h2>Incoming</h2>
      <Loaded {...ingress}>
        {({ webhook }) => (
          <div class="panel">
            <p class="muted">
              A request to this URL (any method, any path below it) becomes the bot’s <code>webhook</code>{' '}
              event.{' '}
              {webhook.verification === 'standard-webhooks'
                ? 'It must be signed with the bot’s signing secret (Standard Webhooks).'
                : 'Requests are not verified: the bot checks them.'}
            </p>
            <CopyValue value={webhook.url} label="Webhook URL" />
          </div>
        )}
      </Loaded>

      <h2>Integrations</h2>
      {installed.length === 0 ? (
        <p class="muted">
          No integration is installed. Deploy one with <code>bp deploy</code> in its project, then install it
          on the bot (<code>updateBot</code> with <code>integrations</code>, or the bot’s own definition).
        </p>
      ) : (
        <ListTable
          items={installed}
          columns={[
            { label: 'Integration', cell: (i) => `${i.name} ${i.version}` },
            { label: 'Webhook URL', wide: true, cell: (i) => <code>{i.webhookUrl}</code> },
            { label: 'Status', cell: (i) => <Registration installation={i} /> },
          ]}
        />
      )}

      <h2>Outgoing</h2>
      <p class="muted">The bot’s events of the types named are posted to each URL, signed with its secret.</p>
      {secret && <ShownOnce label="Signing secret" value={secret} onDone={() => setSecret(undefined)} />}
      {mayChange && (
        <form
          class="panel inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <Field label="Receiver URL">
            <input
              type="url"
              required
              value={url}
              maxLength={adminFields.webhookUrl}
              placeholder="https://example.com/parley-events"
              onInput={(e) => setUrl(valueOf(e))}
            />
          </Field>
          <Field label="Event types" hint="comma-separated; * for all">
            <input value={types} required onInput={(e) => setTypes(valueOf(e))} />
          </Field>
          <button type="submit" disabled={create.busy}>
            Subscribe
          </button>
          <InlineError error={create.error} />
        </form>
      )}
      <InlineError error={remove.error} />
      <Loaded {...subscriptions}>
        {({ subscriptions: items }) =>
          items.length === 0 ? (
            <EmptyState title="No subscriptions">
              <p>
                {mayChange
                  ? 'Subscribe a URL to have the bot’s events posted to it.'
                  : 'A developer of this workspace can subscribe a URL.'}
              </p>
            </EmptyState>
          ) : (
            <ListTable
              items={items}
              columns={[
                { label: 'URL', wide: true, cell: (s) => <code>{s.url}</code> },
                { label: 'Events', cell: (s) => s.eventTypes.join(', ') },
                { label: 'Last delivery', cell: (s) => <LastDelivery subscription={s} /> },
                ...(mayChange ? [removeColumn] : []),
              ]}
            />
          )
        }
      </Loaded>
    </section>
  );
}
