import type { RuntimeBot } from '../domain/bots/bots.ts';
import { codeVersion } from '../domain/bots/bot-code.ts';
import { parsePackage } from '../package/compiled.ts';
import type { Domain } from '../domain/index.ts';
import { MAX_CALL_TIMEOUT_MS } from '../package/format.ts';
import type { CompiledPackage } from '../package/format.ts';
import { DEFAULT_LIMITS } from './sandbox/types.ts';
import type { BotProgram, JsonObject } from './sandbox/types.ts';

/** A deployed bot as the engine runs it: its package, its compiled program, and its `env`. */
export interface LoadedBot {
  bot: RuntimeBot;
  pkg: CompiledPackage;
  program: BotProgram;
  env: JsonObject;
}

/** Loads deployed bots, keeping each version parsed until a new deploy replaces it. */
/**
 * A bot's `maxExecutionTime` (seconds, as the hosted API has it) as a call's time limit, within what a
 * package may declare for itself (`limits.timeoutMs`, at most a minute).
 */
function executionTimeMs(seconds: number | undefined): number {
  if (seconds === undefined) return DEFAULT_LIMITS.timeoutMs;
  return Math.min(seconds * 1000, MAX_CALL_TIMEOUT_MS);
}

export class LoadedBots {
  private readonly cache = new Map<string, { updatedAt: string; loaded: LoadedBot }>();

  constructor(
    private readonly domain: Domain,
    /** Told when a bot's version is replaced, so its warm isolate can go. */
    private readonly onReplaced: (versionId: string) => void = () => {},
  ) {}

  async get(botId: string): Promise<LoadedBot | undefined> {
    // Code, configuration and secrets all change the bot's updatedAt: one cheap read tells if the cache holds.
    const stamp = await this.domain.bots.runtimeStamp(botId);
    if (!stamp || stamp.runtime !== 'parley') return undefined;
    const hit = this.cache.get(botId);
    if (hit && hit.updatedAt === stamp.updatedAt) return hit.loaded;
    const bot = await this.domain.bots.forRuntime(botId);
    if (!bot || bot.runtime !== 'parley' || bot.code === null) return undefined;
    const pkg = parsePackage(bot.code);
    const limits = {
      memoryMb: pkg.manifest.limits?.memoryMb ?? DEFAULT_LIMITS.memoryMb,
      timeoutMs: pkg.manifest.limits?.timeoutMs ?? executionTimeMs(bot.maxExecutionTime),
    };
    const versionId = codeVersion(botId, bot.code);
    const defaults = Object.fromEntries(
      Object.entries(pkg.manifest.configuration?.variables ?? {}).map(([k, v]) => [k, v.default ?? null]),
    );
    const loaded: LoadedBot = {
      bot,
      pkg,
      program: { versionId, botId, units: pkg.units, limits },
      env: { ...defaults, ...bot.configuration, ...bot.secrets },
    };
    if (hit && hit.loaded.program.versionId !== versionId) this.onReplaced(hit.loaded.program.versionId);
    this.cache.set(botId, { updatedAt: bot.updatedAt, loaded });
    return loaded;
  }
}
