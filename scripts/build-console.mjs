#!/usr/bin/env node
// Builds the web console (console/) into dist/console/: a script and a stylesheet for every page, the
// chunks of script and the stylesheets that screens load when they open (the flow view), all named by their
// content hash (served as immutable), an index.html that loads the first two (served with no-cache), and
// gzip and brotli copies of each, served to clients that accept them. Runs at `npm ci` (prepare).
// `--watch` rebuilds on every change, for working on the console with a server running.
import { Buffer } from 'node:buffer';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { writeWithCompressed } from './compress.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_OUT = path.join(root, 'dist', 'console');
const ASSETS = 'assets';
/** Where the server serves dist/console/assets (src/api/console). */
const ASSETS_URL = `/console/${ASSETS}/`;
const MAIN = 'console/src/main.tsx';
const TARGET = ['chrome109', 'edge109', 'firefox115', 'safari16'];

/**
 * `import href from './view.css?url'`: the stylesheet bundled on its own (its @imports in it) into an asset
 * named by its hash, and its address, which the screen links when it loads. A stylesheet that a script
 * imports would be merged into the console's, which every page loads, even from a chunk loaded later.
 */
const stylesheetUrls = {
  name: 'parley-stylesheet-url',
  setup(build) {
    build.onResolve({ filter: /\.css\?url$/ }, async (args) => {
      const { path: file, errors } = await build.resolve(args.path.slice(0, -'?url'.length), {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
      });
      return errors.length > 0 ? { errors } : { path: file, namespace: 'stylesheet-url' };
    });
    build.onLoad({ filter: /.*/, namespace: 'stylesheet-url' }, async (args) => {
      const css = await esbuild.build({
        absWorkingDir: root,
        entryPoints: [args.path],
        outdir: 'unused',
        bundle: true,
        minify: true,
        target: TARGET,
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      return {
        contents: css.outputFiles[0].contents,
        loader: 'file',
        resolveDir: path.dirname(args.path),
        watchFiles: Object.keys(css.metafile.inputs).map((file) => path.resolve(root, file)),
      };
    });
  },
};

/**
 * `import names from 'parley:code-names'`: what bot code sees that the code editor completes, taken at
 * build time from the server's one source of each: the members of `event` (src/engine/event-object.ts)
 * and the operations of `client` (src/contract/bot-operations.ts), names and one line each. The modules
 * are bundled for Node and imported here; the console gets their names, not their schemas.
 */
const codeNames = {
  name: 'parley-code-names',
  setup(build) {
    build.onResolve({ filter: /^parley:code-names$/ }, (args) => ({
      path: args.path,
      namespace: 'code-names',
    }));
    build.onLoad({ filter: /.*/, namespace: 'code-names' }, async () => {
      const sources = await esbuild.build({
        absWorkingDir: root,
        stdin: {
          contents: [
            "export { EVENT_FIELDS } from './src/engine/event-object.ts';",
            "export { BOT_OPERATIONS } from './src/contract/bot-operations.ts';",
          ].join('\n'),
          resolveDir: root,
          loader: 'ts',
        },
        bundle: true,
        format: 'esm',
        platform: 'node',
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const code = Buffer.from(sources.outputFiles[0].contents).toString('base64');
      const { EVENT_FIELDS, BOT_OPERATIONS } = await import(`data:text/javascript;base64,${code}`);
      const names = {
        event: Object.entries(EVENT_FIELDS).map(([name, detail]) => ({ name, detail })),
        client: BOT_OPERATIONS.map((op) => ({ name: op.id, detail: op.summary })),
      };
      return {
        contents: JSON.stringify(names),
        loader: 'json',
        watchFiles: Object.keys(sources.metafile.inputs)
          .filter((file) => !file.startsWith('<stdin>'))
          .map((file) => path.resolve(root, file)),
      };
    });
  },
};

/**
 * index.html from its template, loading the page's script and stylesheet, and preloading the chunks that
 * script imports (the browser would find them only once it has the script); every file's compressed copies.
 */
const finish = (outdir) => ({
  name: 'parley-console-index',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0 || !result.metafile) return;
      const outputs = Object.entries(result.metafile.outputs);
      // Each chunk loaded later has an entryPoint too: the page's is main.tsx's.
      const [js, entry] = outputs.find(([, o]) => o.entryPoint === MAIN) ?? [];
      if (!js || !entry?.cssBundle) throw new Error('the console build made no script or no stylesheet');
      const href = (file) =>
        `/console/${path.relative(outdir, path.resolve(root, file)).split(path.sep).join('/')}`;
      const template = await readFile(path.join(root, 'console', 'index.html'), 'utf8');
      const preloads = entry.imports
        .filter((chunk) => chunk.kind === 'import-statement')
        .map((chunk) => `<link rel="modulepreload" href="${href(chunk.path)}" />`);
      const html = template
        .replace('%JS%', href(js))
        .replace('%CSS%', href(entry.cssBundle))
        .replace('<!-- %PRELOADS% -->', preloads.join('\n    '));
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
    entryPoints: { console: MAIN },
    outdir: path.join(outdir, ASSETS),
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    publicPath: ASSETS_URL,
    bundle: true,
    // A screen imported with import() is a chunk of its own, fetched when it opens (ES modules only).
    splitting: true,
    format: 'esm',
    target: TARGET,
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
    plugins: [stylesheetUrls, codeNames, finish(outdir)],
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
