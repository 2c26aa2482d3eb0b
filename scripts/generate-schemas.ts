// Writes the published JSON Schemas of the bot package format to schemas/ (npm run schemas).
// test/package.test.ts fails when the committed files differ from what the format defines.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { packageSchemaFiles } from '../src/package/schemas.ts';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'schemas');
await mkdir(dir, { recursive: true });
for (const [file, schema] of Object.entries(packageSchemaFiles())) {
  const target = path.join(dir, file);
  // Formatted as the repository's Prettier settings say, so that `prettier --check .` passes on them.
  const options = (await prettier.resolveConfig(target)) ?? {};
  await writeFile(target, await prettier.format(JSON.stringify(schema), { ...options, filepath: target }));
  process.stdout.write(`wrote schemas/${file}\n`);
}
