// The webhook ingress, from the outside: a sender posts to `{base}/webhooks/{id}/…` (any method and
// path), signed with the bot's signing secret in the Standard Webhooks format (signed here with that
// format's reference library, not with Parley's code); the request becomes the bot's `webhook` event,
// which its hooks see. Bad signatures, unknown ids, oversized bodies and repeated deliveries queue
// nothing new; the secret rotates through the official client.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { deployPackage, json, waitForLog } from './helpers/deployed-bots.ts';
import type { DeployedBot } from './helpers/deployed-bots.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { parleyAdmin } from './helpers/parley-client.ts';
import { adminCall } from './helpers/webhooks.ts';
import type { Answer } from './helpers/webhooks.ts';

const webhookBot = {
  'bot.json': json({ formatVersion: 1, name: 'webhook-bot' }),
  'hooks/before_incoming_event/log.ts':
    "if (event.type === 'webhook') console.info('WEBHOOK ' + event.payload.method + ' ' + event.payload.path + ' ?' + event.payload.query + ' ' + (event.payload.bodyEncoding ?? 'utf8') + ' ' + event.payload.body + ' sig=' + (event.payload.headers['webhook-signature'] ? 'yes' : 'no'));\n",
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'hello' },
      { id: 'hello', type: 'standard', cards: [{ type: 'say', message: { type: 'text', text: 'hi' } }] },
      { id: 'hook', type: 'trigger', trigger: { kind: 'custom_event', event: 'webhook' }, next: 'seen' },
      {
        id: 'seen',
        type: 'standard',
        cards: [{ type: 'code', code: "console.info('TRIGGERED by ' + event.payload.path);" }],
      },
    ],
  }),
};

interface WebhookInfo {
  id: string;
  url: string;
  verification: string;
}

for (const store of await testStores()) {
  describe(`webhook ingress (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let webhook: WebhookInfo;
    let secret: string;

    const admin = (method: string, path: string, body?: unknown) => adminCall(t, method, path, body);

    const post = async (
      path: string,
      body: string | Buffer,
      headers: Record<string, string> = {},
      method = 'POST',
    ): Promise<Answer> => {
      const response = await fetch(`${webhook.url}${path}`, { method, headers, body });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    const signed = (body: string, key = secret, id = `msg_${randomUUID()}`, at = new Date()) => ({
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign(id, at, body),
      'content-type': 'application/json',
    });

    const webhookEvents = async (): Promise<{ id: string; payload: Record<string, unknown> }[]> => {
      const page = await bot.client.listEvents({ type: 'webhook' });
      return page.events;
    };

    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, webhookBot);
      const got = await admin('GET', `/bots/${bot.botId}/webhook`);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      webhook = got.body.webhook as WebhookInfo;
      secret = (await t.client().getBot({ id: bot.botId })).bot.signingSecret;
    });
    after(() => t?.close());

    test('a bot has a webhook URL of its own, verified by signature unless told otherwise', () => {
      assert.equal(webhook.url, `${t.url}/webhooks/${webhook.id}`);
      assert.equal(webhook.verification, 'standard-webhooks');
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    });

    test('a signed request becomes the bot’s webhook event, with its method, path, query and body', async () => {
      const since = new Date().toISOString();
      const body = JSON.stringify({ order: 42 });
      const answer = await post('/orders/new?source=shop&x=1', body, signed(body));
      assert.equal(answer.status, 202, JSON.stringify(answer.body));
      assert.equal(answer.body.duplicate, false);
      assert.match(String(answer.body.eventId), /^evt_/);
      await waitForLog(
        t,
        bot.botId,
        since,
        /^WEBHOOK POST \/orders\/new \?source=shop&x=1 utf8 \{"order":42\} sig=yes$/,
      );
      await waitForLog(t, bot.botId, since, /^TRIGGERED by \/orders\/new$/);
      const event = await bot.client.getEvent({ id: String(answer.body.eventId) });
      assert.equal(event.event.type, 'webhook');
    });

    test('requests that are not signed, or signed wrong, or too long ago, are refused and queue nothing', async () => {
      const before = (await webhookEvents()).length;
      const body = '{"a":1}';
      const cases: [string, Record<string, string>][] = [
        ['unsigned', { 'content-type': 'application/json' }],
        ['another secret', signed(body, `whsec_${Buffer.from('not the secret').toString('base64')}`)],
        ['another body', signed('{"a":2}')],
        ['ten minutes old', signed(body, secret, 'msg_old', new Date(Date.now() - 10 * 60_000))],
      ];
      for (const [name, headers] of cases) {
        const answer = await post('', body, headers);
        assert.equal(answer.status, 401, `${name}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.type, 'Unauthorized', name);
        assert.match(String(answer.body.message), /webhook-signature/, name);
      }
      assert.equal((await webhookEvents()).length, before);
    });

    test('an unknown webhook id answers 404', async () => {
      for (const id of [randomUUID(), 'not-a-webhook']) {
        const response = await fetch(`${t.url}/webhooks/${id}/x`, { method: 'POST', body: '{}' });
        assert.equal(response.status, 404);
        assert.equal(((await response.json()) as { type: string }).type, 'ResourceNotFound');
      }
    });

    test('a delivery sent twice is queued once: the second answer names the first event', async () => {
      const body = '{"retry":true}';
      const headers = signed(body);
      const first = await post('/retry', body, headers);
      const second = await post('/retry', body, headers);
      assert.equal(first.status, 202);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.deepEqual(second.body, { eventId: first.body.eventId, duplicate: true });
      const events = await webhookEvents();
      assert.equal(events.filter((e) => e.payload.path === '/retry').length, 1);
    });

    test('a body larger than an event holds is refused with 413, and nothing is queued', async () => {
      const before = (await webhookEvents()).length;
      const body = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
      const answer = await post('/big', body, signed(body));
      assert.equal(answer.status, 413, JSON.stringify(answer.body).slice(0, 300));
      assert.equal(answer.body.type, 'PayloadTooLarge');
      assert.match(String(answer.body.message), /^body: /);
      assert.equal((await webhookEvents()).length, before);
    });

    test('a body of no declared length is cut off at the limit with 413; an unknown webhook is refused before its body is read', async () => {
      const before = (await webhookEvents()).length;
      const chunk = Buffer.alloc(256 * 1024, 'x');
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // 8 MB at most: the server stops reading long before.
          if (sent >= 8 * 1024 * 1024) return controller.close();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const response = await fetch(`${webhook.url}/stream`, {
        method: 'POST',
        body,
        duplex: 'half',
        headers: { 'content-type': 'application/octet-stream' },
      }).catch((err: unknown) => err);
      // The server answers 413 as soon as the limit is passed; a sender still writing may see the connection end instead.
      if (response instanceof Response) {
        assert.equal(response.status, 413);
        assert.match(((await response.json()) as { message: string }).message, /^body: /);
      }
      assert.ok(sent < 8 * 1024 * 1024, `the server stopped reading (${sent} bytes sent)`);
      assert.equal((await webhookEvents()).length, before);

      const unknown = await fetch(`${t.url}/webhooks/${randomUUID()}`, {
        method: 'POST',
        body: Buffer.alloc(2 * 1024 * 1024, 'y'),
      });
      assert.equal(unknown.status, 404);
    });

    test('with verification off any request is queued, and a binary body arrives in base64', async () => {
      const changed = await admin('PUT', `/bots/${bot.botId}/webhook`, { verification: 'none' });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal((changed.body.webhook as WebhookInfo).verification, 'none');
      try {
        const since = new Date().toISOString();
        const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x01]);
        const answer = await post('/raw', bytes, { 'content-type': 'application/octet-stream' }, 'PUT');
        assert.equal(answer.status, 202, JSON.stringify(answer.body));
        await waitForLog(
          t,
          bot.botId,
          since,
          new RegExp(
            `^WEBHOOK PUT /raw \\? base64 ${bytes.toString('base64').replace(/[+/]/g, '\\$&')} sig=no$`,
          ),
        );
        const get = await fetch(`${webhook.url}?ping=1`);
        assert.equal(get.status, 202);
        await waitForLog(t, bot.botId, since, /^WEBHOOK GET \/ \?ping=1 utf8 {2}sig=no$/);
      } finally {
        await admin('PUT', `/bots/${bot.botId}/webhook`, { verification: 'standard-webhooks' });
      }
    });

    test('rotating the signing secret (official client) makes the old one fail at once', async () => {
      const { newSigningSecret } = await t.client().rotateBotSigningSecrets({ id: bot.botId });
      assert.notEqual(newSigningSecret, secret);
      assert.equal((await t.client().getBot({ id: bot.botId })).bot.signingSecret, newSigningSecret);
      const body = '{"rotated":true}';
      assert.equal((await post('', body, signed(body, secret))).status, 401);
      assert.equal((await post('', body, signed(body, newSigningSecret))).status, 202);
      secret = newSigningSecret;
    });

    test('another workspace sees no webhook of the bot', async () => {
      const other = await t.client().createWorkspace({ name: 'other' });
      const response = await fetch(`${t.url}/v1/admin/bots/${bot.botId}/webhook`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': other.id },
      });
      assert.equal(response.status, 404);
    });

    test('a server upgraded from before webhooks gives its bots one, and their signing secrets keep their bytes', async () => {
      // The store as a release before webhooks left it: no webhook tables, secrets in base64url.
      const bytes = Buffer.from('a secret of an earlier release!!');
      const { db } = t.server.store;
      // (Later migrations go too: a store of that release had none of them.)
      const tables = [
        'draft_test_turns',
        'bot_draft_twins',
        'bot_drafts',
        'bot_versions',
        'packages',
        'row_signatures',
        'passage_signatures',
        'handoff_events',
        'handoffs',
        'row_vectors',
        'passage_vectors',
        'embedding_jobs',
        'bot_llm_models',
        'llm_providers',
        'llm_calls',
        'channel_sends',
        'bot_installations',
        'integrations',
        'webhook_sends',
      ];
      // SQLite's views written to (0039, 0040) name the columns dropped below; their triggers go with them.
      if (store.name === 'sqlite')
        for (const view of ['message_writes', 'state_writes', 'chat_reply_writes'])
          await sql`drop view ${sql.table(view)}`.execute(db);
      for (const table of [...tables, 'webhook_subscriptions', 'webhook_deliveries', 'bot_webhooks'])
        await sql`drop table ${sql.table(table)}`.execute(db);
      // The versions of the signatures (PostgreSQL's 0036, SQLite's 0042); their triggers went with their tables.
      await sql`drop table passage_signature_versions`.execute(db);
      if (store.name === 'postgres') {
        await sql`drop sequence passage_signature_version`.execute(db);
        await sql`drop function passage_signatures_added, passage_signatures_removed`.execute(db);
      }
      for (const column of ['integration_alias', 'integration_id', 'process_owner'])
        await sql`alter table bot_api_keys drop column ${sql.ref(column)}`.execute(db);
      await sql`alter table workspaces drop column ai_spend_limit`.execute(db);
      await sql`alter table search_entries drop column scope`.execute(db);
      await sql`alter table messages drop column event_id`.execute(db);
      await sql`drop index workflows_active_timeout`.execute(db);
      await sql`alter table bots drop column workflow_updates`.execute(db);
      await sql`alter table conversations drop column last_event_at`.execute(db);
      await sql`alter table bots drop column version_id`.execute(db);
      await sql`alter table chat_channels drop column fallback_message`.execute(db);
      for (const column of ['event_id', 'call_kind', 'call_ms'])
        await sql`alter table bot_logs drop column ${sql.ref(column)}`.execute(db);
      await sql`drop index events_pending_workspace`.execute(db);
      await sql`alter table events drop column workspace_id`.execute(db);
      await sql`create index events_pending_order on events (created_at, id) where status = 'pending'`.execute(
        db,
      );
      await sql`delete from kysely_migration where name >= '0018'`.execute(db);
      await sql`update bots set signing_secret = ${bytes.toString('base64url')} where id = ${bot.botId}`.execute(
        db,
      );

      await t.restart();
      const upgraded = (await parleyAdmin(t).getBotWebhook({ id: bot.botId })).webhook;
      assert.equal(upgraded.verification, 'standard-webhooks');
      assert.notEqual(upgraded.id, webhook.id, 'a new webhook id');
      const kept = (await t.client().getBot({ id: bot.botId })).bot.signingSecret;
      assert.equal(kept, `whsec_${bytes.toString('base64')}`);
      webhook = upgraded;
      const body = '{"after":"upgrade"}';
      const answer = await post('', body, signed(body, kept));
      assert.equal(answer.status, 202, JSON.stringify(answer.body));
    });
  });
}
