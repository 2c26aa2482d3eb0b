import { buildConfig } from '../config.ts';
import type { SettingName } from '../config.ts';
import { createDomain } from '../domain/index.ts';
import type { Domain } from '../domain/index.ts';
import { openStore } from '../store/index.ts';
import { MemoryBus } from '../bus/memory.ts';
import { checkCompiledPackage } from '../package/compiled.ts';

/** Operator commands work on the store directly (the same one the server uses), then close it. */
export async function withDomain<T>(
  values: Partial<Record<SettingName, string>>,
  work: (domain: Domain) => Promise<T>,
): Promise<T> {
  const config = buildConfig(values);
  const store = await openStore(config.store);
  try {
    return await work(createDomain(store, new MemoryBus(), { checkPackage: checkCompiledPackage }));
  } finally {
    await store.close();
  }
}
