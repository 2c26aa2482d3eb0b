// What the handoff tests share: members of the test workspace with a role, their Admin API clients, and
// the refusals their calls meet.
import assert from 'node:assert/strict';
import { APIS } from '../../src/contract/apis.ts';
import type { Client } from '../../src/contract/client.ts';
import { HEADERS } from '../../src/contract/headers.ts';
import { parleyAdmin, parleyClient } from './parley-client.ts';
import type { TestServer } from './server.ts';

export type Admin = Client<typeof APIS.admin.operations>;

/** An Admin API client with this token, in this workspace; a failure throws with its status and body. */
export const adminAs = (t: TestServer, token: string, workspaceId: string): Admin =>
  parleyClient(t.url, APIS.admin, {
    [HEADERS.authorization]: `Bearer ${token}`,
    [HEADERS.workspaceId]: workspaceId,
  });

/** A new member of the test workspace with this role, and a token of theirs. */
export async function memberToken(
  t: TestServer,
  role: 'agent' | 'viewer' | 'developer',
): Promise<{ email: string; token: string; memberId: string }> {
  const email = `${role}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
  const { id: memberId } = await parleyAdmin(t).createWorkspaceMember({ email, role });
  const account = await t.server.domain.accounts.findByEmail(email);
  assert.ok(account);
  return { email, token: (await t.server.domain.accounts.createToken(account.id, role)).value, memberId };
}

/** The status and error body a call fails with (the test clients throw them in their message). */
export async function failure(call: Promise<unknown>): Promise<{ status: number; body: { type: string } }> {
  try {
    await call;
  } catch (err) {
    const match = /answered (\d+): (.*)$/s.exec((err as Error).message);
    assert.ok(match, (err as Error).message);
    return { status: Number(match[1]), body: JSON.parse(match[2] ?? '{}') as { type: string } };
  }
  assert.fail('the call succeeded');
}
