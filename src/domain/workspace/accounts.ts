import type { Db, Executor } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import type { Row } from '../../store/schema.ts';
import { notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import { hashToken, newToken } from './tokens.ts';
import type { Account, PersonalAccessToken, UpdateAccountBody } from './schemas.ts';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toAccount(row: Row<'accounts'>): Account {
  return {
    id: row.id,
    email: row.email,
    ...(row.display_name !== null && { displayName: row.display_name }),
    // Parley sends no email, so no address is ever verified.
    emailVerified: false,
    ...(row.profile_picture !== null && { profilePicture: row.profile_picture }),
    createdAt: row.created_at,
  };
}

function toPat(row: Pick<Row<'personal_access_tokens'>, 'id' | 'created_at' | 'note'>): PersonalAccessToken {
  return { id: row.id, createdAt: row.created_at, note: row.note };
}

export class Accounts {
  constructor(
    private readonly db: Db,
    private readonly caches: Caches,
  ) {}

  async get(accountId: string): Promise<Account> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw notFound('Account', accountId);
    return toAccount(row);
  }

  /** The account's own name and picture; a field left out keeps its value. */
  async update(accountId: string, body: UpdateAccountBody): Promise<Account> {
    await this.db
      .updateTable('accounts')
      .set({
        ...(body.displayName !== undefined && { display_name: body.displayName }),
        ...(body.profilePicture !== undefined && { profile_picture: body.profilePicture }),
        updated_at: nowIso(),
      })
      .where('id', '=', accountId)
      .execute();
    return this.get(accountId);
  }

  async findByEmail(email: string, db: Executor = this.db): Promise<Account | undefined> {
    const row = await db
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', normalizeEmail(email))
      .executeTakeFirst();
    return row && toAccount(row);
  }

  /** Accounts are keyed by email; nothing is sent to the address. */
  async getOrCreateByEmail(email: string, db: Executor = this.db): Promise<Account> {
    const existing = await this.findByEmail(email, db);
    if (existing) return existing;
    const now = nowIso();
    const row: Row<'accounts'> = {
      id: newId('account'),
      email: normalizeEmail(email),
      display_name: null,
      profile_picture: null,
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  /** Returns the token's value: the only time it exists outside the caller's hands. */
  async createToken(
    accountId: string,
    note: string,
    value = newToken('personalAccessToken'),
    db: Executor = this.db,
  ): Promise<PersonalAccessToken & { value: string }> {
    const row = {
      id: newId('personalAccessToken'),
      account_id: accountId,
      note,
      token_hash: hashToken(value),
      created_at: nowIso(),
    };
    await db.insertInto('personal_access_tokens').values(row).execute();
    return { ...toPat(row), value };
  }

  async listTokens(accountId: string): Promise<PersonalAccessToken[]> {
    const rows = await this.db
      .selectFrom('personal_access_tokens')
      .select(['id', 'created_at', 'note'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toPat);
  }

  async deleteToken(accountId: string, tokenId: string): Promise<void> {
    const result = await this.db
      .deleteFrom('personal_access_tokens')
      .where('id', '=', tokenId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Personal access token', tokenId);
    this.caches.accessChanged();
  }
}
