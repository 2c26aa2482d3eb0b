import { monotonicFactory } from 'ulidx';

/** Prefixes of every id Parley hands out; ids are prefix + ULID (sortable by creation time, 28-36 chars). */
export const ID_PREFIXES = {
  account: 'acct',
  workspace: 'wkspace',
  member: 'member',
  bot: 'bot',
  botApiKey: 'bak',
  personalAccessToken: 'pat',
  analytics: 'anl',
  user: 'user',
  conversation: 'conv',
  message: 'msg',
  event: 'evt',
  state: 'state',
  workflow: 'wfl',
  observation: 'obs',
  botLog: 'log',
  file: 'file',
  filePassage: 'psg',
  fileBlob: 'blob',
  knowledgeBase: 'kb',
  table: 'table',
  tableJob: 'tjob',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ulid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid()}`;
}
