import type { Store } from '../store/index.ts';
import { Accounts } from './accounts.ts';
import { Caches } from './caches.ts';
import { Settings } from './settings.ts';
import { Actions } from './actions.ts';
import { Analytics } from './analytics.ts';
import { Auth } from './auth.ts';
import { BotKeys } from './bot-keys.ts';
import { BotLogs } from './bot-logs.ts';
import { Bots } from './bots.ts';
import { Conversations } from './conversations.ts';
import { Events } from './events.ts';
import { EventQueue } from './event-queue.ts';
import { Members } from './members.ts';
import { Messages } from './messages.ts';
import { Chat } from './chat.ts';
import { ChatChannels } from './chat-channels.ts';
import { ForeignIds } from './chat-ids.ts';
import { Links } from './links.ts';
import { ConversationLog } from './live.ts';
import type { LiveBus } from './live.ts';
import { States } from './states.ts';
import { Users } from './users.ts';
import { Workflows } from './workflows.ts';
import { Workspaces } from './workspaces.ts';

/** Every domain service, wired to one store. The API, the engine and the CLI all go through these. */
export interface Domain {
  store: Store;
  accounts: Accounts;
  workspaces: Workspaces;
  members: Members;
  bots: Bots;
  botKeys: BotKeys;
  botLogs: BotLogs;
  auth: Auth;
  analytics: Analytics;
  users: Users;
  conversations: Conversations;
  messages: Messages;
  events: Events;
  states: States;
  workflows: Workflows;
  foreignIds: ForeignIds;
  log: ConversationLog;
  channels: ChatChannels;
  links: Links;
  chat: Chat;
  queue: EventQueue;
  actions: Actions;
  settings: Settings;
}

export interface DomainOptions {
  /** The secret of shared-mode chat keys; undefined: generated once and kept in the store. */
  chatSecret?: string;
}

export function createDomain(store: Store, bus: LiveBus, options: DomainOptions = {}): Domain {
  const { db } = store;
  const caches = new Caches();
  const foreignIds = new ForeignIds();
  const log = new ConversationLog(store, foreignIds, bus);
  const settings = new Settings(db);
  const channels = new ChatChannels(db, settings, caches);
  const links = new Links();
  const accounts = new Accounts(db, caches);
  const members = new Members(db, accounts, caches);
  const users = new Users(store);
  const conversations = new Conversations(store, users, log);
  const queue = new EventQueue(store);
  const events = new Events(store, log, queue);
  const messages = new Messages(store, users, conversations, events, log);
  const chat = new Chat(
    { store, caches, channels, ids: foreignIds, users, conversations, messages, events, log },
    options.chatSecret,
  );
  return {
    store,
    accounts,
    workspaces: new Workspaces(db, caches),
    members,
    bots: new Bots(db, channels, links, caches),
    botKeys: new BotKeys(db, caches),
    botLogs: new BotLogs(store),
    auth: new Auth(db, members, caches),
    analytics: new Analytics(db),
    users,
    conversations,
    messages,
    events,
    states: new States(store, events),
    workflows: new Workflows(store),
    foreignIds,
    log,
    channels,
    links,
    chat,
    queue,
    actions: new Actions(store, log),
    settings,
  };
}
