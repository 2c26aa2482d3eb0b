// Writes the generated parts of docs/ (npm run docs): the settings' table of docs/configuration.md and
// docs/package-format.md. test/docs.test.ts fails when the committed files differ from what this writes.
import { writeFile } from 'node:fs/promises';
import { generatedDocs } from './docs-pages.ts';

for (const [file, text] of Object.entries(await generatedDocs())) {
  await writeFile(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
