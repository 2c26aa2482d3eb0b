#!/usr/bin/env node
// Builds the web console (console/) into dist/console/: one bundle of script and one of styles, named by
// their content hash (served as immutable), an index.html that loads them (served with no-cache), and
// gzip and brotli copies of each, served to clients that accept them. Runs at `npm ci` (prepare).
// `--watch` rebuilds on every change, for working on the console with a server running.
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { writeWithCompressed } from './compress.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_OUT = path.join(root, 'dist', 'console');
const ASSETS = 'assets';

/** index.html from its template, loading the hashed bundles; the bundles' compressed copies. */
const finish = (outdir) => ({
  name: 'parley-console-index',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0 || !result.metafile) return;
      const outputs = Object.entries(result.metafile.outputs);
      const [js, entry] = outputs.find(([, o]) => o.entryPoint !== undefined) ?? [];
      if (!js || !entry?.cssBundle) throw new Error('the console build made no script or no stylesheet');
      const href = (file) =>
        `/console/${path.relative(outdir, path.resolve(root, file)).split(path.sep).join('/')}`;
      const template = await readFile(path.join(root, 'console', 'index.html'), 'utf8');
      const html = template.replace('%JS%', href(js)).replace('%CSS%', href(entry.cssBundle));
      await writeWithCompressed(path.join(outdir, 'index.html'), html);
      for (const [file] of outputs) {
        if (!file.endsWith('.map')) {
          const full = path.resolve(root, file);
          await writeWithCompressed(full, await readFile(full));
        }
      }
    });
  },
});

/** The esbuild options of the console: Preact's JSX, every dependency bundled, modern browsers. */
function options(outdir) {
  return {
    absWorkingDir: root,
    entryPoints: { console: 'console/src/main.tsx' },
    outdir: path.join(outdir, ASSETS),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    target: ['chrome109', 'edge109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
    // React Flow (the flow view) is a React library: here it runs on Preact, through preact/compat
    // (`react/jsx-runtime` and `react-dom/client` follow, as subpaths). The console's build alone: the
    // webchat's bundles React itself.
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
    plugins: [finish(outdir)],
  };
}

/** Builds the console into `outdir` (default dist/console), replacing what was there. */
export async function buildConsole(outdir = CONSOLE_OUT) {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  const result = await esbuild.build(options(outdir));
  return Object.keys(result.metafile.outputs).map((f) => path.relative(outdir, path.resolve(root, f)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--watch')) {
    await rm(CONSOLE_OUT, { recursive: true, force: true });
    const context = await esbuild.context({ ...options(CONSOLE_OUT), logLevel: 'info' });
    await context.watch();
    console.log('watching console/ (Ctrl-C to stop)');
  } else {
    const started = Date.now();
    const files = await buildConsole();
    console.log(
      `console built in ${Date.now() - started} ms: dist/console/{index.html, ${files.join(', ')}}`,
    );
  }
}
