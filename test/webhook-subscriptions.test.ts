// Outgoing webhooks, from the outside: an operator subscribes a URL to a bot's event types through the
// Admin API; each matching event is POSTed to it, signed with the subscription's secret in the Standard
// Webhooks format (verified here with that format's reference library), tried again with a growing wait
// while the receiver fails (the same delivery id each time), kept across a restart, and the last
// delivery's outcome shows on the subscription.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { deployPackage, json, send, startChat } from './helpers/deployed-bots.ts';
import type { DeployedBot } from './helpers/deployed-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { adminCall, startReceiver } from './helpers/webhooks.ts';
import type { ReceivedRequest, WebhookReceiver } from './helpers/webhooks.ts';

const echoBot = {
  'bot.json': json({ formatVersion: 1, name: 'subscribed-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'echo' },
      {
        id: 'echo',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'You said: {{ event.preview }}' } }],
      },
    ],
  }),
};

interface Subscription {
  id: string;
  url: string;
  eventTypes: string[];
  lastDelivery?: { status: string; statusCode?: number; error?: string; at: string };
}

interface Delivery {
  type: string;
  botId: string;
  event: { id: string; type: string; conversationId?: string; payload: Record<string, unknown> };
}

for (const store of await testStores()) {
  describe(`outgoing webhooks (${store.name})`, { skip: store.skip, timeout: 110_000 }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    const receivers: WebhookReceiver[] = [];
    const admin = (method: string, path: string, body?: unknown) => adminCall(t, method, path, body);

    const subscribe = async (url: string, eventTypes: string[]) => {
      const answer = await admin('POST', `/bots/${bot.botId}/webhook-subscriptions`, { url, eventTypes });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return { subscription: answer.body.subscription as Subscription, secret: String(answer.body.secret) };
    };
    const subscriptionsOf = async (): Promise<Subscription[]> => {
      const answer = await admin('GET', `/bots/${bot.botId}/webhook-subscriptions`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.subscriptions as Subscription[];
    };
    const receiver = async (status = 200) => {
      const started = await startReceiver(status);
      receivers.push(started);
      return started;
    };
    const verified = (request: ReceivedRequest, secret: string): Delivery => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
      return new Webhook(secret).verify(request.body, headers) as Delivery;
    };

    before(async () => {
      // The receivers here listen on loopback.
      t = await startTestServer(store, { webhookPrivateTargets: 'on' });
      bot = await deployPackage(t, echoBot);
    });
    after(async () => {
      for (const r of receivers) await r.close();
      await t?.close();
    });

    test('events of the subscribed types are posted, signed; others are not', async () => {
      const messages = await receiver();
      const hooks = await receiver();
      const forMessages = await subscribe(`${messages.url}/parley`, ['message_created']);
      const forHooks = await subscribe(hooks.url, ['webhook']);
      assert.match(forMessages.secret, /^whsec_/);
      assert.deepEqual(forMessages.subscription.eventTypes, ['message_created']);
      const listed = await subscriptionsOf();
      assert.deepEqual(
        listed.map((s) => s.id),
        [forMessages.subscription.id, forHooks.subscription.id],
      );
      assert.ok(
        listed.every((s) => !('secret' in s)),
        'the secret is shown once, at creation',
      );

      const c = await startChat(bot);
      const messageId = await send(c, 'hello');
      await waitFor('the delivery of the message', async () => messages.received.length > 0, 15_000);
      const [request] = messages.received;
      assert.ok(request);
      assert.equal(request.path, '/parley');
      assert.equal(request.headers['content-type'], 'application/json');
      const delivery = verified(request, forMessages.secret);
      assert.equal(delivery.type, 'message_created');
      assert.equal(delivery.botId, bot.botId);
      assert.equal(delivery.event.type, 'message_created');
      assert.equal(delivery.event.conversationId, c.runtimeConversationId);
      assert.equal((await bot.client.getEvent({ id: delivery.event.id })).event.type, 'message_created');
      assert.throws(() => verified(request, forHooks.secret), 'signed with its own subscription’s secret');
      assert.ok(messageId);
      await waitFor('the last delivery to show', async () => {
        const mine = (await subscriptionsOf()).find((s) => s.id === forMessages.subscription.id);
        return mine?.lastDelivery?.status === 'delivered' && mine.lastDelivery;
      });
      assert.equal(hooks.received.length, 0, 'a chat message is no webhook event');
      for (const s of [forMessages, forHooks]) {
        assert.equal(
          (await admin('DELETE', `/bots/${bot.botId}/webhook-subscriptions/${s.subscription.id}`)).status,
          200,
        );
      }
      await send(c, 'after');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(messages.received.length, 1, 'a deleted subscription gets nothing more');
    });

    test('a failing receiver gets the same delivery again after a wait, across a restart, until it takes it', async () => {
      const flaky = await receiver(503);
      const { subscription, secret } = await subscribe(flaky.url, ['*']);
      const event = await bot.client.createEvent({ type: 'order_paid', payload: { order: 7 } });
      await waitFor('the first attempt', async () => flaky.received.length >= 1, 15_000);
      const failed = await waitFor('the failure to show', async () => {
        const mine = (await subscriptionsOf()).find((s) => s.id === subscription.id);
        return mine?.lastDelivery?.status === 'pending' && mine.lastDelivery;
      });
      assert.equal(failed.statusCode, 503);

      await t.restart();
      flaky.status = 200;
      await waitFor('the attempt after the wait', async () => flaky.received.length >= 2, 30_000, 250);
      const [first, second] = flaky.received;
      assert.ok(first && second);
      assert.equal(second.headers['webhook-id'], first.headers['webhook-id'], 'one delivery, one id');
      const gap = Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp']);
      assert.ok(gap >= 4, `the second attempt waited (${gap} s)`);
      assert.equal(verified(second, secret).event.id, event.event.id);
      await waitFor('the delivery to show', async () => {
        const mine = (await subscriptionsOf()).find((s) => s.id === subscription.id);
        return mine?.lastDelivery?.status === 'delivered' && mine.lastDelivery.statusCode === 200;
      });
      await admin('DELETE', `/bots/${bot.botId}/webhook-subscriptions/${subscription.id}`);
    });

    test('an event scheduled for later is posted when it fires, not before', async () => {
      const later = await receiver();
      const { subscription, secret } = await subscribe(later.url, ['reminder']);
      const { event } = await bot.client.createEvent({
        type: 'reminder',
        payload: { note: 'call back' },
        schedule: { delay: 1500 },
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(later.received.length, 0, 'nothing before it fires');
      await waitFor('the delivery once it fired', async () => later.received.length > 0, 15_000);
      const [request] = later.received;
      assert.ok(request);
      const delivery = verified(request, secret);
      assert.equal(delivery.event.id, event.id);
      assert.deepEqual(delivery.event.payload, { note: 'call back' });
      await admin('DELETE', `/bots/${bot.botId}/webhook-subscriptions/${subscription.id}`);
    });

    test('a receiver that cannot be reached is reported, with the reason', async () => {
      const gone = await startReceiver();
      await gone.close();
      const { subscription } = await subscribe(gone.url, ['unreachable']);
      await bot.client.createEvent({ type: 'unreachable', payload: {} });
      const last = await waitFor(
        'the failure to show',
        async () => {
          const mine = (await subscriptionsOf()).find((s) => s.id === subscription.id);
          return mine?.lastDelivery;
        },
        15_000,
      );
      assert.equal(last.status, 'pending');
      assert.equal(last.statusCode, undefined);
      assert.match(String(last.error), /fetch failed|ECONNREFUSED/);
      await admin('DELETE', `/bots/${bot.botId}/webhook-subscriptions/${subscription.id}`);
    });

    test('bad subscriptions are refused naming the field; another workspace sees none', async () => {
      const path = `/bots/${bot.botId}/webhook-subscriptions`;
      const cases: [unknown, RegExp][] = [
        [{ url: 'ftp://example.com/x', eventTypes: ['*'] }, /^url: must be http or https/],
        [{ url: 'not a url', eventTypes: ['*'] }, /^url: /],
        [{ url: 'http://user:pw@example.com', eventTypes: ['*'] }, /^url: may not hold credentials/],
        [{ url: 'http://example.com', eventTypes: [] }, /eventTypes/],
        [{ url: 'http://example.com' }, /eventTypes/],
      ];
      for (const [body, message] of cases) {
        const answer = await admin('POST', path, body);
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.match(String(answer.body.message), message, JSON.stringify(answer.body));
      }
      const made: string[] = [];
      for (let i = 0; i < 20; i++) {
        const answer = await admin('POST', path, { url: `http://example.com/${i}`, eventTypes: ['none'] });
        assert.equal(answer.status, 200);
        made.push((answer.body.subscription as Subscription).id);
      }
      const past = await admin('POST', path, { url: 'http://example.com/21', eventTypes: ['none'] });
      assert.equal(past.status, 413);
      assert.equal(past.body.type, 'LimitExceeded');
      for (const id of made) await admin('DELETE', `${path}/${id}`);

      const other = await t.client().createWorkspace({ name: 'elsewhere' });
      const response = await fetch(`${t.url}/v1/admin${path}`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': other.id },
      });
      assert.equal(response.status, 404);
      assert.equal((await admin('DELETE', `${path}/whsub_nope`)).status, 404);
    });
  });

  describe(
    `outgoing webhooks stay off the server's own network by default (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let bot: DeployedBot;
      let receiver: WebhookReceiver;
      before(async () => {
        t = await startTestServer(store);
        bot = await deployPackage(t, echoBot);
        receiver = await startReceiver();
      });
      after(async () => {
        await receiver?.close();
        await t?.close();
      });

      test('an address that is not public is refused at once; a name that resolves to one, at delivery', async () => {
        const path = `/bots/${bot.botId}/webhook-subscriptions`;
        for (const url of [
          'http://127.0.0.1:9/x',
          'http://[::1]/x',
          'http://169.254.169.254/latest',
          'http://10.1.2.3/',
          // IPv6 forms that carry or hide an IPv4 address of the server's network.
          'http://[::ffff:127.0.0.1]/x',
          'http://[::ffff:7f00:1]/x',
          'http://[::ffff:0:a01:203]/x',
          'http://[::127.0.0.1]/x',
          'http://[64:ff9b::a9fe:a9fe]/latest',
          'http://[64:ff9b:1::1]/x',
          'http://[2002:7f00:1::]/x',
          'http://[2001::1]/x',
          'http://[fd00::1]/x',
          'http://[fe80::1]/x',
        ]) {
          const answer = await adminCall(t, 'POST', path, { url, eventTypes: ['*'] });
          assert.equal(answer.status, 400, url);
          assert.match(String(answer.body.message), /^url: .* is not a public address/, url);
        }
        const port = new URL(receiver.url).port;
        const created = await adminCall(t, 'POST', path, {
          url: `http://localhost:${port}/x`,
          eventTypes: ['probe'],
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        await bot.client.createEvent({ type: 'probe', payload: {} });
        const last = await waitFor(
          'the refusal to show',
          async () => {
            const answer = await adminCall(t, 'GET', path);
            return (answer.body.subscriptions as Subscription[])[0]?.lastDelivery;
          },
          15_000,
        );
        assert.equal(last.status, 'pending');
        assert.match(String(last.error), /^localhost resolves to (127\.0\.0\.1|::1), not a public address/);
        assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
      });
    },
  );
}
