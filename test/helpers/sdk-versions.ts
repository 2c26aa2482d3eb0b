/**
 * Bots built with the published `@botpress/sdk` releases, as `bp build` builds them: the SDK installed
 * from the registry into a folder of its own (one per version, kept in the repository's ignored `.tmp/`
 * between runs; the first run needs the registry), and the bot's source bundled to CommonJS with esbuild from
 * `import x from './index'; export default x; export const handler = x.handler;`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const run = promisify(execFile);
const ROOT = path.resolve('.tmp/sdk-versions');

/**
 * The SDK releases a bot may be written with today, and what each needs beside it that the registry
 * serves. The registry has no `@botpress/client` 2.5.0 (SDK 7.2.4 pins it) nor `@bpinternal/zui` 2.4
 * (its peer): SDK 7 gets the newest of each that is served, 1.45.0 and 2.1.1.
 */
export const SDK_RELEASES = {
  '1.6.3': {},
  '2.4.3': { zui: '0.13.5' },
  '3.1.0': { zui: '0.13.5' },
  '5.4.3': { zui: '1.3.3' },
  '7.2.4': { zui: '2.1.1', client: '1.45.0' },
} as const satisfies Record<string, { zui?: string; client?: string }>;
export type SdkRelease = keyof typeof SDK_RELEASES;

const installs = new Map<SdkRelease, Promise<string>>();

/** The folder whose `node_modules` holds `@botpress/sdk` at `release`, installed once. */
function sdkFolder(release: SdkRelease): Promise<string> {
  let folder = installs.get(release);
  if (!folder) {
    folder = install(release);
    installs.set(release, folder);
  }
  return folder;
}

async function install(release: SdkRelease): Promise<string> {
  const dir = path.join(ROOT, release);
  const marker = path.join(dir, 'node_modules/@botpress/sdk/package.json');
  const installed = await readFile(marker, 'utf8').then(
    (text) => (JSON.parse(text) as { version?: string }).version,
    () => undefined,
  );
  if (installed === release) return dir;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const needs: { zui?: string; client?: string } = SDK_RELEASES[release];
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: `sdk-${release}`,
      private: true,
      ...(needs.client && { overrides: { '@botpress/client': needs.client } }),
    }),
  );
  const packages = [`@botpress/sdk@${release}`, ...(needs.zui ? [`@bpinternal/zui@${needs.zui}`] : [])];
  await run(
    'npm',
    ['install', '--no-package-lock', '--legacy-peer-deps', '--no-audit', '--no-fund', ...packages],
    { cwd: dir, timeout: 180_000 },
  );
  return dir;
}

/**
 * The bundle `bp build` would make of `source` (the bot's or plugin's `src/index.ts`) on SDK `release`,
 * with `files` beside it (paths relative to `src/`: what `bp build` generates in `.botpress/`, say).
 * Each build has a folder of its own, so that test files bundling at once do not overwrite each other.
 */
export async function sdkBundle(
  release: SdkRelease,
  source: string,
  files: Record<string, string> = {},
): Promise<string> {
  const dir = await sdkFolder(release);
  const project = await mkdtemp(path.join(dir, 'project-'));
  try {
    for (const [file, content] of Object.entries({ ...files, 'index.ts': source })) {
      const target = path.join(project, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    const result = await build({
      stdin: {
        contents: "import x from './index'; export default x; export const handler = x.handler;",
        resolveDir: project,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node18',
      write: false,
      logLevel: 'silent',
    });
    const output = result.outputFiles[0];
    if (!output) throw new Error(`esbuild made no bundle for SDK ${release}`);
    return output.text;
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}
