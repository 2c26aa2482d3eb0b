import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError, UnauthorizedError } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** 128 bits in base64url need at least 22 characters. */
const MIN_RANDOM_CHARS = 22;

for (const store of await testStores()) {
  describe(`Admin API: account and personal access tokens (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    const account = () => t.client({ workspaceId: undefined });

    test('getAccount returns the account of the token', async () => {
      const { account: me } = await account().getAccount({});
      assert.equal(typeof me.id, 'string');
      assert.equal(me.email, 'owner@parley.local');
      assert.match(me.createdAt, ISO_UTC);
      const ws = await account().getWorkspace({ id: t.workspaceId });
      assert.equal(ws.ownerId, me.id, 'the first workspace belongs to this account');

      const other = await t.server.domain.accounts.getOrCreateByEmail('someone@example.com');
      const token = (await t.server.domain.accounts.createToken(other.id, 'test')).value;
      const theirs = (await t.client({ token, workspaceId: undefined }).getAccount({})).account;
      assert.equal(theirs.id, other.id);
      assert.equal(theirs.email, 'someone@example.com');
    });

    test('updateAccount changes only the account of the token: its name, seen by its colleagues, and its picture', async () => {
      const other = await t.server.domain.accounts.getOrCreateByEmail('colleague@example.com');
      await t.client().createWorkspaceMember({ email: 'colleague@example.com', role: 'viewer' });
      const token = (await t.server.domain.accounts.createToken(other.id, 'test')).value;
      const theirs = t.client({ token, workspaceId: undefined });
      const { account: named } = await theirs.updateAccount({ displayName: 'Dana from support' });
      assert.equal(named.displayName, 'Dana from support');
      // A field left out keeps its value.
      const { account: pictured } = await theirs.updateAccount({
        profilePicture: 'https://example.com/d.png',
      });
      assert.equal(pictured.displayName, 'Dana from support');
      assert.equal(pictured.profilePicture, 'https://example.com/d.png');
      assert.equal((await account().getAccount({})).account.displayName, undefined, 'the owner is unchanged');
      const { members } = await t.client().listWorkspaceMembers({});
      assert.equal(
        members.find((m) => m.email === 'colleague@example.com')?.displayName,
        'Dana from support',
      );
      await assert.rejects(theirs.updateAccount({ displayName: '' }), (err) => {
        assert.ok(err instanceof InvalidPayloadError);
        assert.match(err.message, /displayName/);
        return true;
      });
      await assert.rejects(
        t.client({ token: 'bp_pat_nope', workspaceId: undefined }).updateAccount({ displayName: 'x' }),
        UnauthorizedError,
      );
    });

    test('createPersonalAccessToken returns a bp_pat_ value with at least 128 random bits, which works as a token', async () => {
      const { pat } = await account().createPersonalAccessToken({ note: 'laptop' });
      assert.equal(pat.note, 'laptop');
      assert.equal(typeof pat.id, 'string');
      assert.match(pat.createdAt, ISO_UTC);
      assert.ok(pat.value.startsWith('bp_pat_'), pat.value);
      const random = pat.value.slice('bp_pat_'.length);
      assert.match(random, /^[A-Za-z0-9_-]+$/);
      assert.ok(random.length >= MIN_RANDOM_CHARS, `only ${random.length} random characters`);

      const second = (await account().createPersonalAccessToken({ note: 'laptop' })).pat;
      assert.notEqual(second.value, pat.value);
      assert.notEqual(second.id, pat.id);

      const me = (await account().getAccount({})).account;
      const withPat = t.client({ token: pat.value, workspaceId: undefined });
      assert.deepEqual((await withPat.getAccount({})).account, me);
      // It acts in the account's workspaces too.
      assert.ok(Array.isArray((await t.client({ token: pat.value }).listBots({})).bots));
    });

    test('listPersonalAccessTokens lists tokens without their values', async () => {
      const { pat } = await account().createPersonalAccessToken({ note: 'listed' });
      const res = await account().listPersonalAccessTokens({});
      const listed = res.pats.find((p) => p.id === pat.id);
      assert.deepEqual(listed, { id: pat.id, createdAt: pat.createdAt, note: 'listed' });
      for (const p of res.pats) assert.ok(!('value' in p), 'no value in the list');
      const json = JSON.stringify(res);
      assert.ok(!json.includes(pat.value), 'the new token value is not listed');
      assert.ok(!json.includes(pat.value.slice('bp_pat_'.length)));
      assert.ok(!json.includes(t.token), 'the first token value is not listed');
      assert.ok(
        res.pats.some((p) => p.note === 'first start'),
        'the first token is listed by its note',
      );

      // Another account's tokens are not listed.
      const other = await t.server.domain.accounts.getOrCreateByEmail('not-me@example.com');
      const otherPat = await t.server.domain.accounts.createToken(other.id, 'theirs');
      assert.ok(!(await account().listPersonalAccessTokens({})).pats.some((p) => p.id === otherPat.id));
    });

    test('deletePersonalAccessToken revokes the token at once', async () => {
      const { pat } = await account().createPersonalAccessToken({ note: 'short-lived' });
      const withPat = t.client({ token: pat.value, workspaceId: undefined });
      assert.equal(typeof (await withPat.getAccount({})).account.id, 'string');

      assert.deepEqual(await account().deletePersonalAccessToken({ id: pat.id }), {});
      await assert.rejects(withPat.getAccount({}), UnauthorizedError);
      await assert.rejects(t.client({ token: pat.value }).listBots({}), UnauthorizedError);
      assert.ok(!(await account().listPersonalAccessTokens({})).pats.some((p) => p.id === pat.id));
      await assert.rejects(account().deletePersonalAccessToken({ id: pat.id }), ResourceNotFoundError);
      // Other tokens are untouched.
      assert.equal((await account().getAccount({})).account.email, 'owner@parley.local');

      // A token can revoke itself, and no one can revoke another account's token.
      const self = (await account().createPersonalAccessToken({ note: 'self' })).pat;
      const selfClient = t.client({ token: self.value, workspaceId: undefined });
      await selfClient.deletePersonalAccessToken({ id: self.id });
      await assert.rejects(selfClient.getAccount({}), UnauthorizedError);

      const other = await t.server.domain.accounts.getOrCreateByEmail('victim@example.com');
      const theirs = await t.server.domain.accounts.createToken(other.id, 'theirs');
      await assert.rejects(account().deletePersonalAccessToken({ id: theirs.id }), ResourceNotFoundError);
      const victim = t.client({ token: theirs.value, workspaceId: undefined });
      assert.equal((await victim.getAccount({})).account.id, other.id, 'their token still works');
    });

    test('the store keeps only hashes of personal access tokens', async () => {
      const values = [t.token];
      for (const note of ['one', 'two'])
        values.push((await account().createPersonalAccessToken({ note })).pat.value);
      const rows = await t.server.store.db.selectFrom('personal_access_tokens').selectAll().execute();
      assert.ok(rows.length >= 3);
      const dump = JSON.stringify(rows);
      for (const value of values) {
        assert.ok(!dump.includes(value), 'a token value is stored');
        assert.ok(!dump.includes(value.slice('bp_pat_'.length)), 'the random part of a token is stored');
      }
      for (const row of rows) assert.match(row.token_hash, /^[0-9a-f]{64}$/);
    });
  });
}
