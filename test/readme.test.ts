import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { SETTINGS } from '../src/config.ts';
import { PAYLOAD_LIMITS } from '../src/api/limits.ts';

const readme = await readFile('README.md', 'utf8');
// The settings' reference, tested against their declaration so that it cannot drift.
const configuration = await readFile('docs/configuration.md', 'utf8');

test('docs/configuration.md lists every setting with its flag and default', () => {
  for (const setting of Object.values(SETTINGS)) {
    const row = configuration
      .split('\n')
      .find((line) => new RegExp(`^\\|\\s*\`${setting.env}\`\\s*\\|`).test(line));
    assert.ok(row, `docs/configuration.md has a row for ${setting.env}`);
    assert.ok(row.includes(`\`--${setting.flag}\``), `${setting.env} row names --${setting.flag}`);
    if ('default' in setting)
      assert.ok(row.includes(`\`${setting.default}\``), `${setting.env} row gives its default`);
  }
});

test('docs/configuration.md states the payload limits the server enforces', () => {
  const mb = (bytes: number) => `${bytes / (1024 * 1024)} MB`;
  const lines = configuration.split('\n');
  const line = lines.find((l) => l.startsWith('Payload limits')) ?? '';
  const next = lines[lines.indexOf(line) + 1] ?? '';
  const text = `${line} ${next}`;
  assert.ok(text.includes(`Admin ${mb(PAYLOAD_LIMITS.admin)}`));
  assert.ok(text.includes(`Runtime ${mb(PAYLOAD_LIMITS.runtime)}`));
  assert.ok(text.includes(`Tables ${mb(PAYLOAD_LIMITS.tables)}`));
  assert.ok(text.includes(`webhook ingress ${mb(PAYLOAD_LIMITS.webhook)}`));
});

test('the README gives the two commands', () => {
  assert.ok(readme.includes('npm ci && npm start'));
  assert.ok(readme.includes('npm test'));
});
