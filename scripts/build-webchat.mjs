#!/usr/bin/env node
// Builds the webchat's browser assets (webchat/) into dist/webchat/, from the official @botpress/webchat
// package: the page of the share link and of the embed script's frame (the webchat, React and their
// styles, named by their content hash and served as immutable), the embed script itself (inject.js, a
// stable name, served with a short cache), a manifest that names the hashed files, and gzip and brotli
// copies of each. Runs at `npm ci` (prepare); nothing is fetched at run time.
import { createRequire } from 'node:module';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { writeWithCompressed } from './compress.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEBCHAT_OUT = path.join(root, 'dist', 'webchat');
const ASSETS = 'assets';
const TARGET = ['chrome109', 'edge109', 'firefox115', 'safari16'];

/** The webchat is a development dependency: an install without them (`--omit=dev`) builds nothing. */
function webchatInstalled() {
  try {
    createRequire(path.join(root, 'package.json')).resolve('@botpress/webchat');
    return true;
  } catch {
    return false;
  }
}

const common = {
  absWorkingDir: root,
  bundle: true,
  minify: true,
  target: TARGET,
  logLevel: 'warning',
  legalComments: 'linked',
  define: { 'process.env.NODE_ENV': '"production"' },
};

/** Builds everything into `outdir` (default dist/webchat), replacing what was there; answers the manifest. */
export async function buildWebchat(outdir = WEBCHAT_OUT) {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(path.join(outdir, ASSETS), { recursive: true });
  const page = await esbuild.build({
    ...common,
    entryPoints: { page: 'webchat/src/page.tsx' },
    outdir: path.join(outdir, ASSETS),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'react',
    sourcemap: 'linked',
    metafile: true,
    // The webchat's sound and icons come inlined, not from elsewhere.
    loader: { '.mp3': 'dataurl', '.wav': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl' },
  });
  const outputs = Object.entries(page.metafile.outputs);
  const [js, entry] = outputs.find(([, o]) => o.entryPoint !== undefined) ?? [];
  if (!js || !entry?.cssBundle) throw new Error('the webchat page build made no script or no stylesheet');
  await esbuild.build({
    ...common,
    entryPoints: ['webchat/src/inject.ts'],
    outfile: path.join(outdir, 'inject.js'),
    format: 'iife',
    legalComments: 'none',
  });
  const relative = (file) => path.relative(outdir, path.resolve(root, file)).split(path.sep).join('/');
  const manifest = {
    page: { script: relative(js), stylesheet: relative(entry.cssBundle) },
    inject: 'inject.js',
  };
  await writeFile(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  for (const file of [...outputs.map(([f]) => path.resolve(root, f)), path.join(outdir, 'inject.js')]) {
    if (!file.endsWith('.map') && !file.endsWith('.LEGAL.txt'))
      await writeWithCompressed(file, await readFile(file));
  }
  return manifest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!webchatInstalled()) {
    console.warn('webchat not built: @botpress/webchat is not installed (a development dependency)');
  } else {
    const started = Date.now();
    const manifest = await buildWebchat();
    console.log(
      `webchat built in ${Date.now() - started} ms: dist/webchat/{${manifest.inject}, ${manifest.page.script}, ${manifest.page.stylesheet}}`,
    );
  }
}
