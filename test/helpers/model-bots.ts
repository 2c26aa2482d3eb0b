// A bot package deployed on a test server whose language models are the tests' model server: what the
// suites of the AI cards and of bot code's model calls share.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { deployPackage, replies, sendAndWait, startChat } from './deployed-bots.ts';
import type { Chatter, DeployedBot, Files } from './deployed-bots.ts';
import { parleySettings, startModelServer } from './model-server.ts';
import type { ModelServer, ReceivedRequest } from './model-server.ts';
import { startTestServer } from './server.ts';
import type { TestServer } from './server.ts';
import type { TestStore } from './stores.ts';

export interface ModelBotSuite {
  readonly models: ModelServer;
  readonly t: TestServer;
  readonly bot: DeployedBot;
}

/**
 * In a describe block: before its tests, the model server, a test server on `store` that calls it and
 * the package deployed there; after them, both servers closed. Read the fields inside tests.
 */
export function modelBotSuite(store: TestStore, files: () => Promise<Files> | Files): ModelBotSuite {
  let running: ModelBotSuite | undefined;
  let models: ModelServer | undefined;
  let t: TestServer | undefined;
  before(async () => {
    models = await startModelServer();
    t = await startTestServer(store, parleySettings(models));
    running = { models, t, bot: await deployPackage(t, await files()) };
  });
  after(async () => {
    await t?.close();
    await models?.close();
  });
  const started = (): ModelBotSuite => {
    assert.ok(running, 'the suite has not started: read it inside a test');
    return running;
  };
  return {
    get models() {
      return started().models;
    },
    get t() {
      return started().t;
    },
    get bot() {
      return started().bot;
    },
  };
}

/** A new conversation's first message, its turn processed, and every reply of the bot to it. */
export async function firstExchange(
  bot: DeployedBot,
  text: string,
): Promise<{ replies: string[]; chatter: Chatter }> {
  const chatter = await startChat(bot);
  const event = await sendAndWait(bot, chatter, text);
  assert.equal(event.status, 'processed', JSON.stringify(event.failureReason));
  return { replies: await replies(bot, chatter), chatter };
}

/** The chat completions the model server received whose request contains `text`. */
export function completionsAbout(models: ModelServer, text: string): ReceivedRequest[] {
  return models.requests.filter(
    (r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes(text),
  );
}
