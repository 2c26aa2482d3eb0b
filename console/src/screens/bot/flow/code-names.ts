// The names bot code sees that the code editor completes after a dot: the members of `event` and the
// operations of `client` (from the server's sources, at build time), and from the draft itself the
// configuration (`env.`), the variables of each scope (bot.json's catalogue) and the actions.
import built from 'parley:code-names';
import type { Files } from './draft-model.ts';

export interface CodeName {
  name: string;
  detail: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object's keys as names, each with its `type` (a variable's, a configuration value's) as detail. */
const namesOf = (value: unknown, what: string): CodeName[] =>
  isRecord(value)
    ? Object.entries(value).map(([name, v]) => ({
        name,
        detail: isRecord(v) && typeof v.type === 'string' ? `${what} (${v.type})` : what,
      }))
    : [];

/** The manifest as far as it parses: a bot.json being edited may not. */
function manifestOf(files: Files): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(files['bot.json'] ?? '{}');
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

const ACTION_FILE = /^actions\/([^/]+)\.json$/;

/** The names completed after `<object>.`, by object. */
export function codeNames(files: Files): Record<string, CodeName[]> {
  const manifest = manifestOf(files);
  const variables = isRecord(manifest.variables) ? manifest.variables : {};
  const configuration = isRecord(manifest.configuration) ? manifest.configuration.variables : undefined;
  return {
    event: built.event,
    client: built.client,
    env: namesOf(configuration, 'configuration'),
    workflow: namesOf(variables.workflow, 'workflow variable'),
    conversation: namesOf(variables.conversation, 'conversation variable'),
    user: namesOf(variables.user, 'user variable'),
    bot: namesOf(variables.bot, 'bot variable'),
    actions: Object.keys(files).flatMap((file) => {
      const name = ACTION_FILE.exec(file)?.[1];
      return name ? [{ name, detail: 'action' }] : [];
    }),
  };
}
