import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';

const run = promisify(execFile);

/** Where fetched SDK packages are kept between runs (the repository's ignored `.tmp/`). */
const PACKAGES = path.resolve('.tmp/sdk-packages');

const fetching = new Map<string, Promise<string>>();

/**
 * The folder of `@botpress/sdk` at `version`, from the registry's tarball (`npm pack`, into `.tmp/`,
 * the project's own dependencies untouched). An install of SDK 7.2.4 fails (it pins
 * `@botpress/client@2.5.0`, which the registry does not serve), but its dist requires only
 * `@botpress/client`, `semver` and `browser-or-node`, which the project has.
 */
export function sdkPackage(version: string): Promise<string> {
  let found = fetching.get(version);
  if (!found) {
    found = (async () => {
      const dir = path.join(PACKAGES, `sdk-${version}`);
      const unpacked = path.join(dir, 'package');
      if (await exists(path.join(unpacked, 'dist/index.cjs'))) return unpacked;
      await mkdir(dir, { recursive: true });
      const { stdout } = await run('npm', ['pack', `@botpress/sdk@${version}`, '--silent'], { cwd: dir });
      const tarball = stdout.trim().split('\n').pop() ?? '';
      await run('tar', ['xzf', tarball], { cwd: dir });
      await rm(path.join(dir, tarball), { force: true });
      return unpacked;
    })();
    fetching.set(version, found);
  }
  return found;
}

/**
 * A bot's bundle as `bp build` makes it: `src/index.ts` (`source`) wrapped as
 * `import x from './src/index'; export default x; export const handler = x.handler;`, bundled by
 * esbuild to CommonJS, with `@botpress/sdk` at `version` and the rest from the project's modules.
 */
export async function buildSdkBot(version: string, source: string): Promise<string> {
  const sdk = await sdkPackage(version);
  await mkdir(PACKAGES, { recursive: true });
  const dir = await mkdtemp(path.join(PACKAGES, 'bot-'));
  try {
    await mkdir(path.join(dir, 'src'));
    await writeFile(path.join(dir, 'src/index.ts'), source);
    await writeFile(
      path.join(dir, 'entry.ts'),
      "import x from './src/index'\nexport default x\nexport const handler = x.handler\n",
    );
    const outfile = path.join(dir, 'index.cjs');
    await esbuild.build({
      entryPoints: [path.join(dir, 'entry.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile,
      alias: { '@botpress/sdk': sdk },
      nodePaths: [path.resolve('node_modules')],
      logLevel: 'error',
    });
    return await readFile(outfile, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
