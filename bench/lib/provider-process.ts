import path from 'node:path';
import type { ProviderReady } from './model-provider.ts';
import { ROOT } from './parley.ts';
import { LOAD_CPU, start } from './procs.ts';

/** The scenario's model provider as a process of its own, on the load generator's CPU, once it is ready. */
export async function startModelProvider(): Promise<ProviderReady> {
  const proc = start(
    'model provider',
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'lib', 'model-provider.ts')],
    { cwd: ROOT, cpu: LOAD_CPU },
  );
  const [line] = await proc.waitFor(/^\{"ready":true.*\}$/m, 60_000);
  return JSON.parse(line) as ProviderReady;
}
