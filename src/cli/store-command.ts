import { existsSync } from 'node:fs';
import { buildConfig } from '../config.ts';
import type { SettingName } from '../config.ts';
import { createDomain } from '../domain/index.ts';
import type { Domain } from '../domain/index.ts';
import { openStore } from '../store/index.ts';
import { MemoryBus } from '../bus/memory.ts';
import { checkCompiledPackage } from '../package/compiled.ts';
import { draftBuilder } from '../package/draft-builder.ts';
import { CliError } from './errors.ts';

/** Operator commands work on the store directly (the same one the server uses), then close it. */
export async function withDomain<T>(
  values: Partial<Record<SettingName, string>>,
  work: (domain: Domain) => Promise<T>,
): Promise<T> {
  const config = buildConfig(values);
  // Opening SQLite creates its file: a command run away from the server's data would work on a new, empty
  // database (and say the owner does not exist) instead of the server's.
  if (config.store.kind === 'sqlite' && !existsSync(config.store.file)) {
    throw new CliError(
      `no Parley database at ${config.store.file}: run this where the server keeps its data, with the server's DATA_DIR (default ./data of the folder it was started in) or DATABASE_URL`,
    );
  }
  const store = await openStore(config.store);
  try {
    return await work(
      createDomain(store, new MemoryBus(), {
        checkPackage: checkCompiledPackage,
        packageBuilder: draftBuilder,
      }),
    );
  } finally {
    await store.close();
  }
}
