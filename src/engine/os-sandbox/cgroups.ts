/**
 * Kernel control groups for sandboxed processes: memory, CPU and process-count limits the kernel
 * enforces, CPU time read from the kernel, and a sweep that kills whatever a group still holds. Both
 * cgroup v1 (a hierarchy per controller) and v2 (one unified hierarchy) are driven; the groups of one
 * server live under a group of its own (`parley-<pid>`), made under the server's own cgroup.
 */
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What one sandboxed process may use. */
export interface CgroupLimits {
  memoryBytes: number;
  /** A ceiling, in cores (0.5: half of one core's time). */
  cpuCores: number;
  /** Processes and threads together. */
  pids: number;
}

/** One sandbox's group, in each hierarchy that holds it. */
export interface SandboxCgroup {
  /** The `cgroup.procs` files a process writes its pid to, to join the group before it runs anything. */
  readonly procsFiles: string[];
  /** CPU time the group's processes used, in microseconds. */
  cpuMicros(): Promise<number>;
  /** Processes the kernel killed for memory past the group's limit. */
  oomKills(): Promise<number>;
  /** Kills every process the group still holds, then removes the group. */
  destroy(): Promise<void>;
}

/** Where a server makes its sandboxes' groups. */
export interface CgroupTree {
  readonly version: 1 | 2;
  create(name: string, limits: CgroupLimits): Promise<SandboxCgroup>;
  /** Removes the server's own group (its sandboxes' groups are gone by then). */
  close(): Promise<void>;
}

/** The controllers a sandbox needs. */
const V1_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'pids'] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];
const V2_CONTROLLERS = ['memory', 'cpu', 'pids'] as const;

/** CFS's default period; the quota is a share of it. */
const CPU_PERIOD_MICROS = 100_000;
/**
 * The weight of all of a server's sandboxes together, against the server's own threads (1024 each in v1,
 * 100 for a v2 group): under contention, the server that answers requests wins.
 */
const SANDBOXES_V1_SHARES = 512;
const SANDBOXES_V2_WEIGHT = 50;
/** Times a destroy kills what a group holds and looks again (a fork may land between a read and a kill). */
const KILL_ROUNDS = 20;

export class CgroupUnavailable extends Error {}

/**
 * The cgroup tree this server may use, or why there is none: a hierarchy (v1 or v2) with the memory, CPU
 * and pids controllers, where this process may make groups.
 */
export async function openCgroupTree(serverName = `parley-${process.pid}`): Promise<CgroupTree> {
  const mounts = await cgroupMounts();
  const own = await ownCgroups();
  const v1 = V1_CONTROLLERS.map((controller) => {
    const mount = mounts.find((m) => m.type === 'cgroup' && m.options.includes(controller));
    const ownPath = own.find((c) => c.controllers.includes(controller))?.path;
    return { controller, mount, ownPath };
  });
  if (v1.every((c) => c.mount && c.ownPath !== undefined)) {
    const dirs = new Map<V1Controller, string>();
    for (const { controller, mount, ownPath } of v1) {
      if (!mount || ownPath === undefined) continue;
      dirs.set(controller, path.join(mount.point, relativeTo(mount.root, ownPath), serverName));
    }
    return V1Tree.open(dirs);
  }
  const unified = mounts.find((m) => m.type === 'cgroup2');
  const ownUnified = own.find((c) => c.hierarchy === '0')?.path;
  if (unified && ownUnified !== undefined) {
    const base = path.join(unified.point, relativeTo(unified.root, ownUnified));
    const available = (await readText(path.join(base, 'cgroup.controllers')))?.split(/\s+/) ?? [];
    const missing = V2_CONTROLLERS.filter((c) => !available.includes(c));
    if (missing.length === 0) return V2Tree.open(base, serverName);
    throw new CgroupUnavailable(
      `cgroup v2 at ${base} lacks the ${missing.join(', ')} controller(s) (v1 lacks ${missingV1(v1)})`,
    );
  }
  throw new CgroupUnavailable(`no cgroup hierarchy with ${missingV1(v1)} is mounted`);
}

function missingV1(found: { controller: string; mount: unknown; ownPath: unknown }[]): string {
  return found
    .filter((c) => !c.mount || c.ownPath === undefined)
    .map((c) => c.controller)
    .join(', ');
}

class V1Tree implements CgroupTree {
  readonly version = 1;

  private constructor(private readonly dirs: Map<V1Controller, string>) {}

  static async open(dirs: Map<V1Controller, string>): Promise<V1Tree> {
    for (const dir of new Set(dirs.values())) {
      await sweepAbandoned(dir);
      await makeGroup(dir);
    }
    const cpu = dirs.get('cpu');
    if (cpu) await writeControl(cpu, 'cpu.shares', SANDBOXES_V1_SHARES);
    const memory = dirs.get('memory');
    // Limits are counted over each sandbox's own children too.
    if (memory) await writeControl(memory, 'memory.use_hierarchy', 1).catch(() => undefined);
    return new V1Tree(dirs);
  }

  async create(name: string, limits: CgroupLimits): Promise<SandboxCgroup> {
    const dirs = new Map([...this.dirs].map(([controller, dir]) => [controller, path.join(dir, name)]));
    const unique = [...new Set(dirs.values())];
    for (const dir of unique) await makeGroup(dir);
    const group = new V1Group(dirs, unique);
    try {
      const memory = dirs.get('memory');
      if (memory) {
        await writeControl(memory, 'memory.limit_in_bytes', limits.memoryBytes);
        // Without swap accounting the file is absent: the memory limit alone holds then.
        await writeControl(memory, 'memory.memsw.limit_in_bytes', limits.memoryBytes).catch(() => undefined);
      }
      const cpu = dirs.get('cpu');
      if (cpu) {
        await writeControl(cpu, 'cpu.cfs_period_us', CPU_PERIOD_MICROS);
        await writeControl(
          cpu,
          'cpu.cfs_quota_us',
          Math.max(1000, Math.round(limits.cpuCores * CPU_PERIOD_MICROS)),
        );
      }
      const pids = dirs.get('pids');
      if (pids) await writeControl(pids, 'pids.max', limits.pids);
    } catch (err) {
      await group.destroy();
      throw err;
    }
    return group;
  }

  async close(): Promise<void> {
    for (const dir of new Set(this.dirs.values())) await rmdir(dir).catch(() => undefined);
  }
}

class V1Group implements SandboxCgroup {
  readonly procsFiles: string[];

  constructor(
    private readonly dirs: Map<V1Controller, string>,
    private readonly unique: string[],
  ) {
    this.procsFiles = unique.map((dir) => path.join(dir, 'cgroup.procs'));
  }

  async cpuMicros(): Promise<number> {
    const dir = this.dirs.get('cpuacct');
    const nanos = dir ? Number(await readText(path.join(dir, 'cpuacct.usage'))) : 0;
    return Number.isFinite(nanos) ? Math.floor(nanos / 1000) : 0;
  }

  async oomKills(): Promise<number> {
    const dir = this.dirs.get('memory');
    if (!dir) return 0;
    const control = await readText(path.join(dir, 'memory.oom_control'));
    const kills = control && /^oom_kill (\d+)$/m.exec(control)?.[1];
    if (kills) return Number(kills);
    // Kernels before 4.13 do not count kills: a limit that was hit is the best sign there is.
    return Number((await readText(path.join(dir, 'memory.failcnt'))) ?? 0) > 0 ? 1 : 0;
  }

  async destroy(): Promise<void> {
    await killAll(this.procsFiles);
    for (const dir of this.unique) await removeGroup(dir);
  }
}

class V2Tree implements CgroupTree {
  readonly version = 2;

  private constructor(private readonly dir: string) {}

  /**
   * v2 lets a group hand controllers to its children only when it holds no process itself: this server
   * moves into a leaf of its own (`<name>/server`) and makes its sandboxes' groups beside it
   * (`<name>/sandboxes/<sandbox>`).
   */
  static async open(base: string, serverName: string): Promise<V2Tree> {
    const own = path.join(base, serverName);
    const server = path.join(own, 'server');
    const sandboxes = path.join(own, 'sandboxes');
    const enable = V2_CONTROLLERS.map((c) => `+${c}`).join(' ');
    try {
      await sweepAbandoned(own);
      await makeGroup(own);
      await makeGroup(server);
      await writeControl(server, 'cgroup.procs', process.pid);
      // The server's former group may be a leaf with other processes in it (then this fails).
      await writeControl(base, 'cgroup.subtree_control', enable).catch(() => undefined);
      await writeControl(own, 'cgroup.subtree_control', enable);
      await makeGroup(sandboxes);
      await writeControl(sandboxes, 'cgroup.subtree_control', enable);
      await writeControl(sandboxes, 'cpu.weight', SANDBOXES_V2_WEIGHT);
    } catch (err) {
      throw new CgroupUnavailable(
        `cgroup v2 at ${base} does not delegate its controllers to this process: ${messageOf(err)}`,
      );
    }
    return new V2Tree(sandboxes);
  }

  async create(name: string, limits: CgroupLimits): Promise<SandboxCgroup> {
    const dir = path.join(this.dir, name);
    await makeGroup(dir);
    const group = new V2Group(dir);
    try {
      await writeControl(dir, 'memory.max', limits.memoryBytes);
      await writeControl(dir, 'memory.swap.max', 0).catch(() => undefined);
      await writeControl(
        dir,
        'cpu.max',
        `${Math.max(1000, Math.round(limits.cpuCores * CPU_PERIOD_MICROS))} ${CPU_PERIOD_MICROS}`,
      );
      await writeControl(dir, 'pids.max', limits.pids);
    } catch (err) {
      await group.destroy();
      throw err;
    }
    return group;
  }

  async close(): Promise<void> {
    await rmdir(this.dir).catch(() => undefined);
  }
}

class V2Group implements SandboxCgroup {
  readonly procsFiles: string[];

  constructor(private readonly dir: string) {
    this.procsFiles = [path.join(dir, 'cgroup.procs')];
  }

  async cpuMicros(): Promise<number> {
    const stat = await readText(path.join(this.dir, 'cpu.stat'));
    return Number((stat && /^usage_usec (\d+)$/m.exec(stat)?.[1]) ?? 0);
  }

  async oomKills(): Promise<number> {
    const events = await readText(path.join(this.dir, 'memory.events'));
    return Number((events && /^oom_kill (\d+)$/m.exec(events)?.[1]) ?? 0);
  }

  async destroy(): Promise<void> {
    // cgroup.kill (Linux 5.14) kills the whole group at once, forks included.
    await writeControl(this.dir, 'cgroup.kill', 1).catch(() => undefined);
    await killAll(this.procsFiles);
    await removeGroup(this.dir);
  }
}

/**
 * The groups that servers no longer running left beside `own` (a crash, a kill): what they hold is
 * killed and they are removed, their sandboxes' groups first. Answers how many there were.
 */
async function sweepAbandoned(own: string): Promise<number> {
  const parent = path.dirname(own);
  let swept = 0;
  for (const name of await readdir(parent).catch(() => [])) {
    const pid = /^parley-(\d+)$/.exec(name)?.[1];
    if (pid === undefined || path.join(parent, name) === own || isRunning(Number(pid))) continue;
    await destroyTree(path.join(parent, name));
    swept++;
  }
  return swept;
}

async function destroyTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await destroyTree(path.join(dir, entry.name));
  await killAll([path.join(dir, 'cgroup.procs')]);
  await removeGroup(dir);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return codeOf(err) === 'EPERM';
  }
}

async function killAll(procsFiles: string[]): Promise<void> {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const pids = new Set<number>();
    for (const file of procsFiles) {
      for (const line of ((await readText(file)) ?? '').split('\n')) if (line) pids.add(Number(line));
    }
    if (pids.size === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10 * (round + 1)));
  }
}

/** rmdir of a group fails while the kernel still tears its last process down: it is tried a few times. */
async function removeGroup(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      if (codeOf(err) === 'ENOENT') return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

async function makeGroup(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

async function writeControl(dir: string, file: string, value: string | number): Promise<void> {
  await writeFile(path.join(dir, file), String(value));
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

interface Mount {
  type: 'cgroup' | 'cgroup2';
  point: string;
  /** The path in the hierarchy that is mounted there (not `/` inside some containers). */
  root: string;
  options: string[];
}

async function cgroupMounts(): Promise<Mount[]> {
  const text = (await readText('/proc/self/mountinfo')) ?? '';
  return text.split('\n').flatMap((line): Mount[] => {
    // id parent major:minor root point options [optional fields] - type source super-options
    const [left, right] = line.split(' - ');
    if (!left || !right) return [];
    const [, , , root, point] = left.split(' ');
    const [type, , superOptions] = right.split(' ');
    if ((type !== 'cgroup' && type !== 'cgroup2') || !root || !point) return [];
    return [
      {
        type,
        point: unescapeMount(point),
        root: unescapeMount(root),
        options: (superOptions ?? '').split(','),
      },
    ];
  });
}

interface OwnCgroup {
  hierarchy: string;
  controllers: string[];
  path: string;
}

async function ownCgroups(): Promise<OwnCgroup[]> {
  const text = (await readText('/proc/self/cgroup')) ?? '';
  return text.split('\n').flatMap((line): OwnCgroup[] => {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) return [];
    const [, hierarchy = '', controllers = '', cgroupPath = '/'] = match;
    return [{ hierarchy, controllers: controllers.split(','), path: cgroupPath }];
  });
}

/** The part of `cgroupPath` below the mount's root (a container may mount its own group as `/`). */
function relativeTo(root: string, cgroupPath: string): string {
  if (root === '/') return cgroupPath;
  return cgroupPath.startsWith(root) ? cgroupPath.slice(root.length) || '/' : '/';
}

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

function codeOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
