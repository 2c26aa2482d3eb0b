import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

export const PARLEY_BIN = path.resolve('bin/parley.js');

export interface ParleyProcess {
  child: ChildProcessWithoutNullStreams;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first match of the pattern in the output, waiting for it up to `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Runs the `parley` command as a user would, with a clean environment plus `env` (in `cwd`, if given;
 * through the command `prefix`, if given, such as setpriv to run it as another user).
 */
export function runParley(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string; prefix?: string[] } = {},
): ParleyProcess {
  const [command = process.execPath, ...before] = [...(options.prefix ?? []), process.execPath];
  const child = spawn(command, [...before, PARLEY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    ...(options.cwd !== undefined && { cwd: options.cwd }),
  });
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern, ms = 20000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            cleanup();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern} in output:\n${text}`));
        }, ms);
        const onExit = () => {
          check();
          cleanup();
          reject(new Error(`parley exited before printing ${pattern}; output:\n${text}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        waiters.add(check);
        child.once('exit', onExit);
        check();
      }),
  };
}
