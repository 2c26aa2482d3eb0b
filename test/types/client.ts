// Type tests of the client derived from the contract, checked by `npm run typecheck` and never run:
// each `@ts-expect-error` line must be a type error, or the typecheck fails.
import { APIS } from '../../src/contract/apis.ts';
import { clientOf, collect } from '../../src/contract/client.ts';
import type { Transport } from '../../src/contract/client.ts';

const transport: Transport = async () => ({});
const admin = clientOf(APIS.admin.operations, transport);
const tables = clientOf(APIS.tables.operations, transport);

export async function calls(): Promise<void> {
  // Methods are the operations' ids, their inputs and answers the specs' types.
  const { bot } = await admin.getBot({ id: 'bot_1' });
  const name: string = bot.name;
  // An operation without a required field may be called without input.
  const { pats } = await admin.listPersonalAccessTokens();
  const note: string = pats[0]?.note ?? '';
  const { table } = await tables.getTable({ table: 't' });
  const factor: number = table.factor;

  // @ts-expect-error: a required field missing (getBot's `id`)
  await admin.getBot({});
  // @ts-expect-error: a field of the wrong type
  await admin.getBot({ id: 1 });
  // @ts-expect-error: a required input left out
  await admin.getBot();
  // @ts-expect-error: an operation the API does not have
  void ('listTables' satisfies keyof typeof admin);
  // @ts-expect-error: a member's role is one of the roles
  await admin.createWorkspaceMember({ email: 'a@b.c', role: 'king' });
  // @ts-expect-error: the answer has no such field
  void ('nonsense' satisfies keyof typeof bot);
  // @ts-expect-error: the answer's field has another type
  const size: string = table.factor;

  // A list's items, page after page, typed as the list's items.
  const { items } = await collect(admin.listBots, 'bots', {});
  const first: string | undefined = items[0]?.id;
  // @ts-expect-error: the key of the items is the list's own
  await collect(admin.listBots, 'members', {});
  void [name, note, factor, size, first];
}
