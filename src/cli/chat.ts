import { parseArgs } from 'node:util';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventSource } from 'eventsource';
import { HEADERS } from '../contract/headers.ts';
import { APIS } from '../contract/apis.ts';
import { listenConversation } from '../contract/chat/index.ts';
import { requestOf, targetOf as wireTarget } from '../contract/client.ts';
import { adminClient, SERVER_FLAGS, SERVER_FLAGS_HELP, targetOf } from './admin-api.ts';
import { clientAt } from './api.ts';
import { CliError } from './errors.ts';
import { printHelp } from './help.ts';
import { printable } from './logs.ts';

const USAGE =
  'usage: parley chat (--bot <id> | --webhook <chat URL>) [--json] [--user-key KEY] [--url URL] [--token T] [--workspace-id W]';
const HELP = `${USAGE}

Talks to a bot from the terminal, as a new end user of its chat channel: opens a conversation, sends
each line you type, and prints the bot's replies as they arrive. Choices, dropdowns and card buttons
are numbered: answer with the number. Pictures, files and cards are shown as text with their links.
Ctrl-C (or the end of the input) leaves.
  --bot ID           The bot (found through the Admin API: needs a token and its workspace).
  --webhook URL      Or the bot's chat URL (getBot's integrations.chat.webhookUrl): no token needed.
  --json             Print each of the bot's messages as its raw payload, one JSON object a line.
  --user-key KEY     Chat as the user of this key (a channel in personal mode) instead of a new one.
${SERVER_FLAGS_HELP}
`;

/** After the input ends, how long without a new reply before leaving, and the longest wait. */
const QUIET_MS = 1500;
const LONGEST_WAIT_MS = 30_000;

type Payload = Record<string, unknown> & { type?: unknown };

/** A reply the user can give by its number: a choice's option, a card's postback or say button. */
interface Option {
  label: string;
  value: string;
}

interface Rendered {
  lines: string[];
  options: Option[];
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const list = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null)
    : [];

/**
 * A message as terminal lines: text as it is, everything else as text with its links; the options the
 * user can answer by number are numbered on from `first`.
 */
export function renderPayload(payload: Payload, first = 1): Rendered {
  const lines: string[] = [];
  const options: Option[] = [];
  const numbered = (label: string, value: string) => {
    options.push({ label, value });
    lines.push(`${first + options.length - 1}. ${label}`);
  };
  const card = (c: Record<string, unknown>) => {
    const subtitle = str(c.subtitle);
    lines.push(`[card] ${str(c.title) ?? ''}${subtitle ? ` — ${subtitle}` : ''}`);
    const image = str(c.imageUrl);
    if (image) lines.push(`picture: ${image}`);
    for (const action of list(c.actions)) {
      const label = str(action.label) ?? '';
      const value = str(action.value) ?? label;
      if (action.action === 'url') lines.push(`${label}: ${value}`);
      else numbered(label, value);
    }
  };
  const item = (p: Payload) => {
    switch (p.type) {
      case 'text':
        lines.push(str(p.text) ?? '');
        break;
      case 'markdown':
        lines.push(str(p.markdown) ?? '');
        break;
      case 'image':
        lines.push(`[picture] ${str(p.imageUrl) ?? ''}`);
        break;
      case 'audio':
        lines.push(`[audio] ${str(p.audioUrl) ?? ''}`);
        break;
      case 'video':
        lines.push(`[video] ${str(p.videoUrl) ?? ''}`);
        break;
      case 'file':
        lines.push(`[file] ${str(p.title) ? `${str(p.title)}: ` : ''}${str(p.fileUrl) ?? ''}`);
        break;
      case 'location': {
        const name = str(p.title) ?? str(p.address);
        lines.push(`[location] ${name ? `${name} ` : ''}(${String(p.latitude)}, ${String(p.longitude)})`);
        break;
      }
      case 'card':
        card(p);
        break;
      case 'carousel':
        for (const c of list(p.items)) card(c);
        break;
      case 'choice':
      case 'dropdown':
        lines.push(str(p.text) ?? '');
        for (const o of list(p.options)) numbered(str(o.label) ?? '', str(o.value) ?? str(o.label) ?? '');
        break;
      case 'bloc':
        // Items are `{ type, payload }` (the chat's form) or flat payloads.
        for (const i of list(p.items)) {
          const inner = typeof i.payload === 'object' && i.payload !== null ? i.payload : {};
          item({ ...(inner as Payload), ...i, type: i.type });
        }
        break;
      default:
        lines.push(`[${String(p.type)}] ${JSON.stringify(p)}`);
    }
  };
  item(payload);
  return { lines: lines.map(printable), options };
}

interface ChatTarget {
  chatUrl: string;
  botName: string;
}

async function targetFor(values: Record<string, string | boolean | undefined>): Promise<ChatTarget> {
  const webhook = values.webhook;
  const botId = values.bot;
  if ((typeof webhook === 'string') === (typeof botId === 'string')) {
    throw new CliError(`give one of --bot and --webhook\n${USAGE}`);
  }
  if (typeof webhook === 'string') {
    if (!/^https?:\/\//.test(webhook))
      throw new CliError(`--webhook must be an http(s) URL, got "${webhook}"`);
    return { chatUrl: webhook.replace(/\/+$/, ''), botName: 'bot' };
  }
  const { url, token, workspaceId } = targetOf(values);
  const { bot } = await adminClient(url, token, workspaceId).getBot({ id: String(botId) });
  const channel = bot.integrations.chat;
  if (!channel?.webhookUrl || channel.enabled === false) {
    throw new CliError(`the bot ${String(botId)} has no chat channel enabled`);
  }
  return { chatUrl: channel.webhookUrl, botName: bot.name };
}

/** The Chat API of one channel (its whole base URL: a hosted channel's too), as a visitor. */
const channel = (url: string, headers: Record<string, string> = {}) =>
  clientAt(url, APIS.chat.operations, headers);

/** The Chat API of one channel, as one end user. */
class ChatUser {
  private constructor(
    readonly url: string,
    readonly key: string,
    /** The channel as this user. */
    readonly api: ReturnType<typeof channel>,
  ) {}

  static async connect(url: string, userKey: string | undefined): Promise<ChatUser> {
    if (userKey) {
      const api = channel(url, { [HEADERS.userKey]: userKey });
      await api.getOrCreateUser();
      return new ChatUser(url, userKey, api);
    }
    const { key } = await channel(url).createUser();
    return new ChatUser(url, key, channel(url, { [HEADERS.userKey]: key }));
  }

  /** The conversation's live signals (server-sent events), reconnecting with Last-Event-ID. */
  listen(conversationId: string): EventSource {
    const key = this.key;
    const target = wireTarget(requestOf(listenConversation, { id: conversationId }));
    return new EventSource(`${this.url}${target}`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, [HEADERS.userKey]: key } }),
    });
  }
}

/** `parley chat`: a conversation with a bot in the terminal. */
export async function chatCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        bot: { type: 'string' },
        webhook: { type: 'string' },
        json: { type: 'boolean' },
        'user-key': { type: 'string' },
        ...SERVER_FLAGS,
      },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values } = parsed;
  if (values.help) return printHelp(HELP);
  const { chatUrl, botName } = await targetFor(values);
  const user = await ChatUser.connect(chatUrl, values['user-key']);
  const { conversation } = await user.api.createConversation();
  // Listening before the first line is sent: no reply can come before the stream is open.
  const stream = user.listen(conversation.id);
  await new Promise<void>((resolve, reject) => {
    stream.addEventListener('open', () => resolve(), { once: true });
    stream.addEventListener(
      'error',
      (event) => {
        if (stream.readyState !== EventSource.CLOSED) return;
        reject(
          new CliError(`cannot listen to the conversation: ${event.message ?? `HTTP ${String(event.code)}`}`),
        );
      },
      { once: true },
    );
  });

  const stdin = process.stdin;
  const tty = stdin.isTTY === true && process.stdout.isTTY === true;
  const rl = readline.createInterface({
    input: stdin,
    ...(tty && { output: process.stdout, terminal: true }),
  });
  rl.setPrompt('you> ');
  const who = printable(botName);
  let options: Option[] = [];
  let lastActivity = Date.now();

  /** Writes lines above the prompt (on a terminal, the line being typed stays as it was). */
  const print = (text: string) => {
    if (tty) {
      readline.clearLine(process.stdout, 0);
      readline.cursorTo(process.stdout, 0);
    }
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    if (tty) rl.prompt(true);
  };

  const showMessage = (payload: Payload) => {
    lastActivity = Date.now();
    const rendered = renderPayload(payload);
    if (rendered.options.length > 0 || payload.type === 'choice' || payload.type === 'dropdown') {
      options = rendered.options;
    }
    if (values.json) {
      print(JSON.stringify(payload));
      return;
    }
    const [first = '', ...rest] = rendered.lines.join('\n').split('\n');
    print([`${who}: ${first}`, ...rest.map((l) => `  ${l}`)].join('\n'));
  };

  let failure: string | undefined;
  const finished = new Promise<number>((resolve) => {
    let done = false;
    const leave = (code: number) => {
      if (done) return;
      done = true;
      stream.close();
      rl.close();
      resolve(code);
    };
    stream.addEventListener('message', (event) => {
      let signal: { type?: string; data?: { payload?: Payload; isBot?: boolean } };
      try {
        signal = JSON.parse(String(event.data)) as typeof signal;
      } catch {
        return; // `data: ping`
      }
      if (signal.type === 'message_created' && signal.data?.isBot && signal.data.payload) {
        showMessage(signal.data.payload);
      }
    });
    stream.addEventListener('error', (event) => {
      if (stream.readyState === EventSource.CLOSED) {
        failure = `the conversation's stream closed: ${event.message ?? `HTTP ${String(event.code)}`}`;
        leave(1);
      }
    });

    let sending: Promise<void> = Promise.resolve();
    rl.on('line', (line) => {
      const text = line.trim();
      if (text === '') {
        if (tty) rl.prompt();
        return;
      }
      const n = /^\d+$/.test(text) ? Number(text) : 0;
      const chosen = n >= 1 ? options[n - 1] : undefined;
      const payload = chosen
        ? { type: 'text' as const, text: chosen.label, value: chosen.value }
        : { type: 'text' as const, text };
      if (chosen && tty) print(`(${chosen.label})`);
      lastActivity = Date.now();
      sending = sending
        .then(() => user.api.createMessage({ conversationId: conversation.id, payload }))
        .then(
          () => {
            lastActivity = Date.now();
            if (tty) rl.prompt();
          },
          (err: unknown) => {
            failure = (err as Error).message;
            leave(1);
          },
        );
    });
    rl.on('SIGINT', () => leave(0));
    process.once('SIGINT', () => leave(0));
    process.once('SIGTERM', () => leave(0));
    // The input ended (a pipe): the last messages' replies are still on their way.
    rl.on('close', () => {
      void (async () => {
        await sending;
        const deadline = Date.now() + LONGEST_WAIT_MS;
        while (!done && Date.now() < deadline && Date.now() - lastActivity < QUIET_MS) await sleep(100);
        leave(0);
      })();
    });
  });

  process.stderr.write(
    `Chatting with ${who} (conversation ${conversation.id}). Type a message and press Enter; Ctrl-C to leave.\n`,
  );
  if (tty) rl.prompt();
  const code = await finished;
  if (failure) process.stderr.write(`parley: ${failure}\n`);
  else if (tty) process.stdout.write('\n');
  return code;
}
