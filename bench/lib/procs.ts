import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Every process the bench started (and their children found later), stopped by pid at the end. */
const started = new Map<number, { name: string; child: ChildProcess | undefined; cmdline?: string }>();

function cmdlineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

/** `taskset -c <cpu>` when the machine has two cores or more and taskset exists. */
let pinning = existsSync('/usr/bin/taskset') && os.cpus().length >= 2;
export function setPinning(on: boolean): void {
  pinning = on && existsSync('/usr/bin/taskset') && os.cpus().length >= 2;
}
export function pinningOn(): boolean {
  return pinning;
}
/** Servers run on core 0, the load generator on core 1. */
export const SERVER_CPU = '0';
export const LOAD_CPU = '1';

export interface Started {
  name: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/** Starts `command args` (through taskset when pinning), keeping its output; registered for the cleanup. */
export function start(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { cpu?: string; keepOutput?: boolean } = {},
): Started {
  const { cpu, keepOutput = true, ...spawnOptions } = options;
  const [cmd, argv] =
    pinning && cpu !== undefined ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = child.pid;
  started.set(pid, { name, child });
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    // Keep the start of the output (the ready line) and a bounded tail.
    if (keepOutput || text.length < 64 * 1024) text += chunk.toString();
    if (text.length > 256 * 1024) text = text.slice(0, 64 * 1024) + '\n...\n' + text.slice(-64 * 1024);
    for (const w of waiters) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      started.delete(pid);
      resolve(code);
      for (const w of waiters) w();
    });
  });
  return {
    name,
    child,
    pid,
    output: () => text,
    exited,
    waitFor: (pattern, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`${name} exited before printing ${pattern}:\n${text.slice(-4000)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`${name}: timed out after ${ms} ms waiting for ${pattern}:\n${text.slice(-4000)}`),
          );
        }, ms);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** The pids of a process's children (Linux). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * The pids of a process's descendants (Linux): an SDK bot's Node process is the server's great-grandchild
 * (its sandbox's bubblewrap, then bubblewrap's init in the sandbox, stand between them).
 */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** Registers processes started by one of ours (Parley's sandbox processes), to stop them if they outlive it. */
export function adopt(pid: number, name: string): void {
  const cmdline = cmdlineOf(pid);
  if (!started.has(pid) && cmdline !== undefined) started.set(pid, { name, child: undefined, cmdline });
}

/** Resident memory of a process, in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

function alive(pid: number): boolean {
  // An adopted pid counts only while it is still the same program (not a reused pid).
  const adopted = started.get(pid)?.cmdline;
  if (adopted !== undefined && cmdlineOf(pid) !== adopted) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stop(pid: number, graceMs = 5000): Promise<void> {
  if (!alive(pid)) {
    started.delete(pid);
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.delete(pid);
}

/** Stops every process still registered, by pid (children registered with `adopt` included). */
export async function stopAll(): Promise<void> {
  await Promise.all([...started.keys()].map((pid) => stop(pid)));
}

/** Synchronous last resort (process exit): SIGKILL whatever is still registered. */
export function killAllNow(): void {
  for (const pid of started.keys()) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.clear();
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux: /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/** CPU time a process has used so far in its own code and in the kernel's, in milliseconds. */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5); here, after the command, at 11 and 12.
    return {
      user: (Number(fields[11]) * 1000) / CLOCK_TICKS,
      system: (Number(fields[12]) * 1000) / CLOCK_TICKS,
    };
  } catch {
    return { user: NaN, system: NaN };
  }
}
const CLOCK_TICKS = 100;
