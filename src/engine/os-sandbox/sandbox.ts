/**
 * The OS sandbox of tenants' processes (SDK bots and integrations): bubblewrap puts each in PID, IPC,
 * mount, network, UTS and cgroup namespaces of its own, with a read-only view of the runtime and of what
 * it is given, an empty size-limited scratch folder, and no network but loopback; setpriv runs it as an
 * unprivileged user of its own with no capabilities and no way to gain any; a cgroup bounds its memory,
 * CPU and processes; rlimits its open files and core dumps. Nothing here filters what the process does:
 * the kernel enforces every limit.
 *
 * It needs root (to make the namespaces without a user namespace, to switch to the sandbox's user, and
 * to make cgroups), bubblewrap and setpriv, and writable cgroup controllers; `OsSandbox.open` says which
 * is missing, and then no tenant code runs.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chown, lstat, mkdir, readlink, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CgroupUnavailable, openCgroupTree } from './cgroups.ts';
import type { CgroupLimits, CgroupTree, SandboxCgroup } from './cgroups.ts';

/** Where the tools are looked for (not $PATH: the server's environment is not trusted to choose them). */
const BWRAP = ['/usr/bin/bwrap', '/usr/local/bin/bwrap'];
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'];
/**
 * The sandboxes' users: far above any range a system hands out (logins, systemd's dynamic users, the
 * subordinate ranges of rootless containers). Each running sandbox has one of its own; each server
 * process takes them from a block of its own (by its pid), so that servers on one host rarely share one
 * (and sharing one would not let them meet: each sandbox has its own namespaces).
 */
const UID_BLOCK = 1024;
const UID_BASE = 1_900_000_000 + (process.pid % 32_768) * UID_BLOCK;
/** Users of this process's running sandboxes (all its servers': tests run several in one process). */
const usedUids = new Set<number>();
/** Open files of a sandboxed process (its own descriptors: it reaches nothing outside with them). */
const OPEN_FILES = 512;
/** What the launcher exits with when it could not put the process in its cgroup. */
export const LAUNCH_FAILED_EXIT_CODE = 125;
/** Where the process sees what it is given, inside the sandbox. */
export const SANDBOX_ROOT = '/parley';
/** This server's Node binary, inside the sandbox: its own path under /usr, else one under SANDBOX_ROOT. */
export const NODE = process.execPath.startsWith('/usr/') ? process.execPath : `${SANDBOX_ROOT}/node`;

export class SandboxUnavailable extends Error {}

/** A file or folder shown read-only inside the sandbox. */
export interface Bind {
  source: string;
  /** Its path inside the sandbox (under SANDBOX_ROOT). */
  target: string;
}

export interface SpawnSpec {
  /** Names the process in the server's logs and its cgroup (letters, digits, `-`). */
  name: string;
  limits: CgroupLimits;
  /** The size of the writable scratch folder (`/tmp`, empty at each start). */
  scratchBytes: number;
  binds: Bind[];
  /** The whole environment of the process (nothing of the server's is passed on). */
  env: Record<string, string>;
  /** The program and its arguments, as paths inside the sandbox. */
  command: string[];
  stdio: StdioOptions;
  /**
   * Runs once the sandbox's folder exists, before the process starts (to open the sockets it will find
   * there), with a number that tells the sandbox from the others of this process; what it answers runs
   * at the release.
   */
  prepare?(runDir: string, id: number): Promise<() => Promise<void>>;
}

/** A process in its sandbox. */
export interface Sandboxed {
  child: ChildProcess;
  cgroup: SandboxCgroup;
  /** A folder of the host, shown inside at `${SANDBOX_ROOT}/run`, owned by the process's user. */
  runDir: string;
  /** Kills what is left in the sandbox and frees its user, cgroup and folder (after the child exited). */
  release(): Promise<void>;
}

interface Tools {
  bwrap: string;
  setpriv: string;
}

export class OsSandbox {
  private readonly runRoot: string;

  private constructor(
    private readonly tools: Tools,
    private readonly cgroups: CgroupTree,
    private readonly systemBinds: string[],
  ) {
    this.runRoot = path.join(os.tmpdir(), `parley-${process.pid}`);
  }

  /** The sandbox of this host, or SandboxUnavailable saying what the host lacks. */
  static async open(): Promise<OsSandbox> {
    if (process.platform !== 'linux')
      throw new SandboxUnavailable(`it needs Linux (this is ${process.platform})`);
    if (process.getuid?.() !== 0)
      throw new SandboxUnavailable(
        'the server must start as root: it runs each bot as a user of its own, in namespaces and cgroups it makes',
      );
    const bwrap = await firstExecutable(BWRAP);
    if (!bwrap)
      throw new SandboxUnavailable(
        'bubblewrap is not installed (Debian and Ubuntu: apt-get install bubblewrap)',
      );
    const setpriv = await firstExecutable(SETPRIV);
    if (!setpriv) throw new SandboxUnavailable('setpriv is not installed (Debian and Ubuntu: util-linux)');
    let cgroups: CgroupTree;
    try {
      cgroups = await openCgroupTree();
    } catch (err) {
      if (err instanceof CgroupUnavailable) throw new SandboxUnavailable(`no usable cgroups: ${err.message}`);
      throw new SandboxUnavailable(`cgroups could not be made: ${messageOf(err)}`);
    }
    const sandbox = new OsSandbox({ bwrap, setpriv }, cgroups, await systemBinds());
    await sandbox.trial();
    return sandbox;
  }

  get cgroupVersion(): 1 | 2 {
    return this.cgroups.version;
  }

  /** Starts `spec.command` in a new sandbox. */
  async spawn(spec: SpawnSpec): Promise<Sandboxed> {
    const uid = this.takeUid();
    const cgroupName = `${spec.name}-${uid - UID_BASE}`;
    let cgroup: SandboxCgroup | undefined;
    let unprepare: (() => Promise<void>) | undefined;
    const runDir = path.join(this.runRoot, String(uid - UID_BASE));
    try {
      cgroup = await this.cgroups.create(cgroupName, spec.limits);
      await mkdir(this.runRoot, { recursive: true, mode: 0o700 });
      await rm(runDir, { recursive: true, force: true });
      await mkdir(runDir, { mode: 0o700 });
      await chown(runDir, uid, uid);
      unprepare = await spec.prepare?.(runDir, uid - UID_BASE);
    } catch (err) {
      usedUids.delete(uid);
      await cgroup?.destroy();
      await rm(runDir, { recursive: true, force: true });
      throw err;
    }
    const child = spawn('/bin/sh', this.launch(spec, uid, cgroup, runDir), {
      env: spec.env,
      stdio: spec.stdio,
      serialization: 'json',
    });
    const group = cgroup;
    let released: Promise<void> | undefined;
    return {
      child,
      cgroup: group,
      runDir,
      release: () =>
        (released ??= (async () => {
          await group.destroy();
          await unprepare?.();
          await rm(runDir, { recursive: true, force: true });
          usedUids.delete(uid);
        })()),
    };
  }

  /** Removes what the sandboxes shared (once none is left: the servers of one process share it). */
  async close(): Promise<void> {
    await this.cgroups.close();
    await rmdir(this.runRoot).catch(() => undefined);
  }

  /**
   * sh joins the cgroup and sets the rlimits, then becomes bubblewrap, which makes the namespaces and
   * the view of the file system, then becomes setpriv, which drops to the sandbox's user for good, then
   * env, then the command: one process all along, in its cgroup before any of the tenant's code runs.
   */
  private launch(spec: SpawnSpec, uid: number, cgroup: SandboxCgroup, runDir: string): string[] {
    const join = [
      'n=$1; shift',
      `while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit ${LAUNCH_FAILED_EXIT_CODE}; shift; n=$((n-1)); done`,
      `ulimit -n ${OPEN_FILES} && ulimit -c 0 || exit ${LAUNCH_FAILED_EXIT_CODE}`,
      'exec "$@"',
    ].join('\n');
    return [
      '-c',
      join,
      'sandbox-launch',
      String(cgroup.procsFiles.length),
      ...cgroup.procsFiles,
      this.tools.bwrap,
      ...this.bwrapArgs(spec, runDir),
      '--',
      this.tools.setpriv,
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--ambient-caps=-all',
      '--bounding-set=-all',
      '--',
      // bubblewrap sets PWD as it enters the folder: the environment is the spec's alone.
      '/usr/bin/env',
      '-u',
      'PWD',
      ...spec.command,
    ];
  }

  private bwrapArgs(spec: SpawnSpec, runDir: string): string[] {
    return [
      '--unshare-ipc',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--die-with-parent',
      '--new-session',
      '--hostname',
      'sandbox',
      // What setpriv needs to become the sandbox's user, and nothing else, until it does.
      '--cap-drop',
      'ALL',
      '--cap-add',
      'CAP_SETUID',
      '--cap-add',
      'CAP_SETGID',
      '--cap-add',
      'CAP_SETPCAP',
      ...this.systemBinds,
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--perms',
      '1777',
      '--size',
      String(spec.scratchBytes),
      '--tmpfs',
      '/tmp',
      '--perms',
      '0755',
      '--dir',
      SANDBOX_ROOT,
      ...spec.binds.flatMap((bind) => ['--ro-bind', bind.source, bind.target]),
      '--ro-bind',
      runDir,
      `${SANDBOX_ROOT}/run`,
      '--chdir',
      '/tmp',
    ];
  }

  /** One sandboxed `true`, so that a host whose kernel refuses a namespace says so at start. */
  private async trial(): Promise<void> {
    const trial = await this.spawn({
      name: 'trial',
      limits: { memoryBytes: 64 * 1024 * 1024, cpuCores: 1, pids: 16 },
      scratchBytes: 1024 * 1024,
      binds: [],
      env: {},
      command: ['/bin/true'],
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    trial.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      trial.child.on('error', () => resolve(null));
      trial.child.on('exit', (exitCode) => resolve(exitCode));
    });
    await trial.release();
    if (code !== 0)
      throw new SandboxUnavailable(
        `a trial sandbox failed (${code === null ? 'it did not start' : `exit code ${code}`}): ${stderr.trim() || 'no message'}`,
      );
  }

  private takeUid(): number {
    for (let offset = 0; offset < UID_BLOCK; offset++) {
      const uid = UID_BASE + offset;
      if (!usedUids.has(uid)) {
        usedUids.add(uid);
        return uid;
      }
    }
    throw new Error(`all ${UID_BLOCK} sandbox users of this process are taken`);
  }
}

/**
 * The system's programs and libraries, read-only: /usr, and /lib, /lib64, /bin, /sbin as the host has
 * them (links into /usr on a merged-/usr system, folders of their own elsewhere), and Node's own binary
 * (at NODE).
 */
async function systemBinds(): Promise<string[]> {
  const binds = ['--ro-bind', '/usr', '/usr'];
  for (const dir of ['/lib', '/lib64', '/bin', '/sbin']) {
    const stat = await lstat(dir).catch(() => undefined);
    if (!stat) continue;
    if (stat.isSymbolicLink()) binds.push('--symlink', await readlink(dir), dir);
    else binds.push('--ro-bind', dir, dir);
  }
  if (NODE !== process.execPath) binds.push('--ro-bind', process.execPath, NODE);
  return binds;
}

async function firstExecutable(candidates: string[]): Promise<string | undefined> {
  for (const candidate of candidates) {
    const ok = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (ok) return candidate;
  }
  return undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
