import { OsSandbox } from '../../src/engine/os-sandbox/sandbox.ts';

let cached: Promise<string | undefined> | undefined;

/**
 * Why this machine cannot run SDK bots (their suites are skipped with the reason), or undefined when
 * it can: bubblewrap, setpriv, root and writable cgroup controllers (the README's "what the host must
 * provide"). On CI (CI=true) the sandbox is required: a machine without it fails the run.
 */
export function sandboxSkip(): Promise<string | undefined> {
  return (cached ??= (async () => {
    try {
      const sandbox = await OsSandbox.open();
      await sandbox.close();
      return undefined;
    } catch (err) {
      const reason = `SDK bots cannot run on this machine: ${err instanceof Error ? err.message : String(err)}`;
      if (process.env.CI === 'true') throw new Error(`CI=true requires the OS sandbox, but: ${reason}`);
      return reason;
    }
  })());
}
