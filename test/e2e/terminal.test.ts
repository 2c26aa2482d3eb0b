// `parley chat` in a real pseudo-terminal (util-linux `script` gives the command a terminal): the prompt,
// replies printed above the line being typed, a choice answered by its number, Ctrl-C to leave. The
// transcript is saved under test/e2e/artifacts/terminal/ to be looked at.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deployWithCli } from '../helpers/chat-bots.ts';
import { PARLEY_BIN } from '../helpers/process.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';

const ARTIFACTS = path.resolve('test/e2e/artifacts/terminal');

/**
 * What a terminal shows of the output: a small screen that follows the carriage return, the cursor to
 * a column (`ESC[nG`) and line clearing (`ESC[K`, `ESC[2K`, `ESC[J`), which readline redraws its prompt
 * with; other control sequences are dropped.
 */
/* eslint-disable no-control-regex -- the escape sequences of a terminal are what this reads */
function screenText(raw: string): string {
  const lines: string[] = [''];
  let column = 0;
  const tokens = raw.match(/\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+/g) ?? [];
  for (const token of tokens) {
    const row = lines.length - 1;
    const line = lines[row] ?? '';
    if (token === '\r') column = 0;
    else if (token === '\n') {
      lines.push('');
      column = 0;
    } else if (token.startsWith('\x1b[')) {
      const [, arg, command] = /^\x1b\[([0-9;?]*)([A-Za-z])$/.exec(token) ?? [];
      if (command === 'G') column = Math.max(0, Number(arg || '1') - 1);
      else if (command === 'K' && arg === '2') lines[row] = '';
      else if (command === 'K' || command === 'J') lines[row] = line.slice(0, column);
    } else {
      lines[row] = line.slice(0, column).padEnd(column) + token + line.slice(column + token.length);
      column += token.length;
    }
  }
  return lines.join('\n');
}
/* eslint-enable no-control-regex */

interface Terminal {
  child: ChildProcessWithoutNullStreams;
  text(): string;
  /** Waits until the screen text (after `from` characters) matches. */
  waitFor(pattern: RegExp, from?: number, ms?: number): Promise<void>;
  /** Types keys, as a person at the keyboard. */
  type(keys: string): void;
}

function inTerminal(args: string[]): Terminal {
  const command = [process.execPath, PARLEY_BIN, ...args]
    .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm' },
  });
  let raw = '';
  child.stdout.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  return {
    child,
    text: () => screenText(raw),
    type: (keys) => child.stdin.write(keys),
    waitFor: async (pattern, from = 0, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!pattern.test(screenText(raw).slice(from))) {
        if (Date.now() > deadline)
          assert.fail(`timed out waiting for ${pattern}; the screen:\n${screenText(raw)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

describe('parley chat in a terminal (sqlite)', () => {
  let t: TestServer;
  let menu: { webhookUrl: string };
  before(async () => {
    t = await startTestServer({ name: 'sqlite' });
    menu = await deployWithCli(t, 'examples/menu-bot');
    await mkdir(ARTIFACTS, { recursive: true });
  });
  after(() => t?.close());

  test('a prompt, the menu bot’s choices numbered, a number answers, Ctrl-C leaves', async () => {
    const term = inTerminal(['chat', '--webhook', menu.webhookUrl]);
    await term.waitFor(/Chatting with bot[^\n]*Ctrl-C to leave\.\nyou> $/m);
    let mark = term.text().length;
    term.type('hi\r');
    await term.waitFor(
      /bot: What would you like to do\?\n {2}1\. FAQ\n {2}2\. Tell you my name\n {2}3\. Bye\n/,
      mark,
    );
    mark = term.text().length;
    term.type('2\r');
    await term.waitFor(/\(Tell you my name\)/, mark);
    await term.waitFor(/bot: What is your name\?/, mark);
    mark = term.text().length;
    term.type('Ada\r');
    await term.waitFor(/bot: Nice to meet you, Ada\./, mark);
    await term.waitFor(/you> $/, mark);
    term.type('\x03');
    const [code] = (await once(term.child, 'exit')) as [number | null];
    await writeFile(path.join(ARTIFACTS, 'menu-chat.txt'), term.text());
    assert.equal(code, 0, term.text());
  });
});
