#!/usr/bin/env node
// The `parley` command: runs the compiled server that `npm ci` (its prepare script) built in dist/.
import { existsSync } from 'node:fs';

// The oldest Node this runs on (package.json's engines): say so, rather than fail somewhere deeper.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`parley: Node.js 20.19 or later is needed; this is ${process.version}\n`);
  process.exit(1);
}

const main = new URL('../dist/server/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('parley: the compiled server is missing (dist/server): run `npm run build` first\n');
  process.exit(1);
}
// Stack traces name the TypeScript sources.
process.setSourceMapsEnabled(true);
await import(main.href);
