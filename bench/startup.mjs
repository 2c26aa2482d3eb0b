#!/usr/bin/env node
// Start-up time of `parley serve`: from spawning the process to /readyz answering 200, on a fresh data
// folder each run (a first start: migrations and the owner's account included). Prints the median.
// Usage: node bench/startup.mjs [runs=7] [command...]   (default command: node bin/parley.js serve)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const runs = Number(process.argv[2] ?? 7);
const command = process.argv.length > 3 ? process.argv.slice(3) : ['node', 'bin/parley.js', 'serve'];

/** A port no one listens on now. */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const times = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-startup-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  let exited;
  child.on('exit', (code, signal) => (exited = `${code ?? signal}`));
  for (;;) {
    if (exited) throw new Error(`the server exited (${exited}) before it was ready`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  times.push(performance.now() - started);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.on('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(
  `start-up to /readyz: median ${median.toFixed(0)} ms over ${runs} runs (${times.map((t) => t.toFixed(0)).join(', ')})`,
);
