/**
 * Builds the runner of SDK bundles' processes (runner/) into the self-contained CommonJS files the
 * sandbox shows them: Node's permission model lets such a process read only those files and its
 * bundle, so the runner and what it uses (the proxy agents) must be one file. Built once per server
 * process, into a folder named by the build's content.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { FROM_SOURCE } from '../../paths.ts';

export interface RunnerFiles {
  runner: string;
  fetchProxy: string;
}

const extension = FROM_SOURCE ? 'ts' : 'js';
const ENTRIES = {
  runner: fileURLToPath(new URL(`./runner/bundle-runner.${extension}`, import.meta.url)),
  fetchProxy: fileURLToPath(new URL(`./runner/fetch-proxy.${extension}`, import.meta.url)),
};

const built = new Map<string, Promise<RunnerFiles>>();

/** The runner's files under `dir`, built at the first call of this process for that folder. */
export function runnerFiles(dir: string): Promise<RunnerFiles> {
  let files = built.get(dir);
  if (!files) {
    files = buildRunner(dir);
    built.set(dir, files);
    files.catch(() => built.delete(dir));
  }
  return files;
}

async function buildRunner(dir: string): Promise<RunnerFiles> {
  const [runner, fetchProxy] = await Promise.all([bundle(ENTRIES.runner), bundle(ENTRIES.fetchProxy)]);
  const hash = createHash('sha256').update(runner).update(fetchProxy).digest('hex').slice(0, 16);
  const out = path.join(dir, `runner-${hash}`);
  await mkdir(out, { recursive: true });
  const files = { runner: path.join(out, 'runner.cjs'), fetchProxy: path.join(out, 'fetch-proxy.cjs') };
  await writeWhole(files.runner, runner);
  await writeWhole(files.fetchProxy, fetchProxy);
  return files;
}

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  return output.text;
}

/** Written under another name, then renamed: a process never reads half a file. */
async function writeWhole(file: string, text: string): Promise<void> {
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, text);
  await rename(partial, file);
}
