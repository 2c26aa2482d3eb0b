// The OS sandbox alone, without Node's permission model (the second wall SDK bots also run behind): a
// plain Node process in it is held by the kernel. Each check runs a script in a sandbox and reads what it
// printed, or what its cgroup says.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NODE, OsSandbox } from '../../src/engine/os-sandbox/sandbox.ts';
import type { Sandboxed } from '../../src/engine/os-sandbox/sandbox.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';

const noSandbox = await sandboxSkip();

describe('a process in the OS sandbox', { skip: noSandbox }, () => {
  let sandbox: OsSandbox;
  let dir: string;

  before(async () => {
    sandbox = await OsSandbox.open();
    dir = await mkdtemp(path.join(os.tmpdir(), 'parley-os-sandbox-'));
  });
  after(async () => {
    await sandbox?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const limits = { memoryBytes: 96 * 1024 * 1024, cpuCores: 0.5, pids: 32 };

  /** Runs `script` (CommonJS) in a new sandbox; answers its exit and what it printed. */
  async function run(
    script: string,
    options: { limits?: typeof limits; scratchBytes?: number } = {},
  ): Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
    cpuMicros: number;
    oomKills: number;
    procs: number;
  }> {
    const file = path.join(dir, `script-${Math.random().toString(36).slice(2)}.cjs`);
    await writeFile(file, script);
    const sandboxed = await sandbox.spawn({
      name: 'test',
      limits: options.limits ?? limits,
      scratchBytes: options.scratchBytes ?? 4 * 1024 * 1024,
      binds: [{ source: file, target: '/parley/script.cjs' }],
      env: { SECRET_PLAIN: 'only-mine' },
      command: [NODE, '/parley/script.cjs', String(process.pid)],
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    sandboxed.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    sandboxed.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      sandboxed.child.on('exit', (code) => resolve(code)),
    );
    const code = await exited;
    // What the cgroup says of it, before the release removes it.
    const cpuMicros = await sandboxed.cgroup.cpuMicros();
    const oomKills = await sandboxed.cgroup.oomKills();
    // The kernel tears its PID namespace down as its init exits: whatever is left is gone within moments.
    let procs = await countProcs(sandboxed);
    for (let waited = 0; procs > 0 && waited < 2000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      procs = await countProcs(sandboxed);
    }
    await sandboxed.release();
    assert.equal(await countProcs(sandboxed), 0, 'nothing is left in the sandbox after its release');
    return { code, stdout, stderr, cpuMicros, oomKills, procs };
  }

  test('runs as a user of its own, with no capability and no way to gain one', async () => {
    const { stdout } = await run(`
      const status = require('fs').readFileSync('/proc/self/status', 'utf8');
      const field = (name) => new RegExp('^' + name + ':\\\\s*(.*)$', 'm').exec(status)[1].trim();
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(),
        capEff: field('CapEff'), capBnd: field('CapBnd'), noNewPrivs: field('NoNewPrivs') }));`);
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    assert.ok(Number(seen.uid) >= 1_900_000_000, `uid ${String(seen.uid)}`);
    assert.equal(seen.gid, seen.uid);
    assert.deepEqual(seen.groups, [seen.uid]);
    assert.equal(seen.capEff, '0000000000000000');
    assert.equal(seen.capBnd, '0000000000000000');
    assert.equal(seen.noNewPrivs, '1');
  });

  test('sees and signals no process but its own', async () => {
    const { stdout } = await run(`
      const pids = require('fs').readdirSync('/proc').filter((name) => /^\\d+$/.test(name));
      let signal; try { process.kill(Number(process.argv[2]), 0); signal = 'reached'; } catch (e) { signal = e.code; }
      let init; try { process.kill(1, 'SIGKILL'); init = 'sent'; } catch (e) { init = e.code; }
      console.log(JSON.stringify({ pids, self: process.pid, signal, init }));`);
    const seen = JSON.parse(stdout) as { pids: string[]; self: number; signal: string; init: string };
    // Its sandbox's init (bubblewrap's, another user's) and itself: nothing of the host's.
    assert.deepEqual(seen.pids.map(Number).sort(), [1, seen.self]);
    assert.equal(seen.signal, 'ESRCH', 'the server’s pid names nothing it can see');
    assert.equal(seen.init, 'EPERM');
  });

  test('sees a read-only system, its own files and an empty scratch folder of a bounded size', async () => {
    const { stdout } = await run(`
      const fs = require('fs');
      const outcome = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
      const fill = () => { const chunk = Buffer.alloc(1024 * 1024); for (let i = 0; i < 64; i++) fs.appendFileSync('/tmp/fill', chunk); };
      console.log(JSON.stringify({
        root: fs.readdirSync('/').sort(),
        etc: outcome(() => fs.readFileSync('/etc/passwd')),
        usr: outcome(() => fs.writeFileSync('/usr/x', 'x')),
        own: outcome(() => fs.writeFileSync('/parley/script.cjs', 'x')),
        tmpEmpty: fs.readdirSync('/tmp').length === 0,
        fill: outcome(fill),
        env: Object.keys(process.env).sort(),
      }));`);
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual(
      (seen.root as string[]).filter(
        (entry) => !['lib', 'lib32', 'lib64', 'libx32', 'sbin', 'bin'].includes(entry),
      ),
      ['dev', 'parley', 'proc', 'tmp', 'usr'],
    );
    assert.equal(seen.etc, 'ENOENT', 'no /etc of the host');
    assert.equal(seen.usr, 'EROFS');
    assert.equal(seen.own, 'EROFS');
    assert.equal(seen.tmpEmpty, true);
    assert.equal(seen.fill, 'ENOSPC', 'the scratch folder holds 4 MB');
    assert.deepEqual(seen.env, ['SECRET_PLAIN'], 'the environment it was given, nothing of the server’s');
  });

  test('has a network of its own loopback only: nothing of the host’s answers there', async () => {
    const host = net.createServer((socket) => socket.end('host'));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', () => resolve()));
    const address = host.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const { stdout } = await run(`
        const interfaces = Object.keys(require('os').networkInterfaces());
        const tryConnect = (host, port) => new Promise((resolve) => {
          const s = require('net').connect(port, host, () => { s.destroy(); resolve('connected'); });
          s.on('error', (e) => resolve(e.code));
        });
        (async () => console.log(JSON.stringify({
          interfaces,
          host: await tryConnect('127.0.0.1', ${port}),
          outside: await tryConnect('1.1.1.1', 443),
          name: await new Promise((resolve) => require('dns').lookup('example.com', (e) => resolve(e ? e.code : 'resolved'))),
        })))();`);
      const seen = JSON.parse(stdout) as Record<string, unknown>;
      assert.deepEqual(seen.interfaces, ['lo']);
      assert.equal(seen.host, 'ECONNREFUSED', 'the host’s loopback is not its loopback');
      assert.equal(seen.outside, 'ENETUNREACH');
      assert.notEqual(seen.name, 'resolved');
    } finally {
      host.close();
    }
  });

  test('is stopped by the kernel past its memory limit', async () => {
    const { code, oomKills } = await run(
      `const kept = []; for (;;) kept.push(Buffer.alloc(8 * 1024 * 1024, 1));`,
    );
    assert.notEqual(code, 0);
    assert.ok(oomKills > 0, 'the kernel counted an OOM kill in its cgroup');
  });

  test('holds at most its number of processes and threads', async () => {
    const { stdout } = await run(`
      const { spawn } = require('child_process');
      let started = 0, refused = '';
      const tries = [];
      for (let i = 0; i < 40; i++) {
        tries.push(new Promise((resolve) => {
          const child = spawn('/usr/bin/sleep', ['5'], { stdio: 'ignore' });
          child.on('spawn', () => { started++; resolve(); });
          child.on('error', (e) => { refused ||= e.code; resolve(); });
        }));
      }
      Promise.all(tries).then(() => { console.log(JSON.stringify({ started, refused })); process.exit(0); });`);
    const seen = JSON.parse(stdout) as { started: number; refused: string };
    assert.ok(seen.started < 32, `at most 32 processes and threads (${JSON.stringify(seen)})`);
    assert.equal(seen.refused, 'EAGAIN');
  });

  test('uses at most its share of CPU, however hard it spins', async () => {
    const { cpuMicros } = await run(`const end = Date.now() + 2000; while (Date.now() < end) {}`);
    // 2 s of wall time at a ceiling of half a core: at most about 1 s of CPU (start-up included).
    assert.ok(cpuMicros > 0 && cpuMicros < 1_300_000, `${cpuMicros} µs of CPU`);
  });

  test('leaves nothing behind: what it started ends with it', async () => {
    const { code, procs } = await run(`
      require('child_process').spawn('/usr/bin/sleep', ['60'], { detached: true, stdio: 'ignore' }).unref();
      setTimeout(() => process.exit(0), 300);`);
    assert.equal(code, 0);
    // Its PID namespace ends with it: the kernel kills a detached child too (and run() checks that the
    // release leaves nothing either).
    assert.equal(procs, 0, 'no process of the sandbox once it exited');
  });
});

/** Processes a sandbox's cgroup holds (0 once it is removed). */
async function countProcs(sandboxed: Sandboxed): Promise<number> {
  let count = 0;
  for (const file of sandboxed.cgroup.procsFiles) {
    const text = await readFile(file, 'utf8').catch(() => '');
    count = Math.max(count, text.split('\n').filter((line) => line !== '').length);
  }
  return count;
}
