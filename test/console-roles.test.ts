// The console hides what a role may not do; the server decides. Both must agree on every role and action.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as consoleRoles from '../console/src/roles.ts';
import * as serverRoles from '../src/domain/workspace/roles.ts';

test("the console's role table is the server's", () => {
  assert.deepEqual([...consoleRoles.ROLES], [...serverRoles.ROLES]);
  const actions = Object.keys(consoleRoles.REQUIRED) as consoleRoles.Action[];
  for (const role of serverRoles.ROLES) {
    for (const action of actions) {
      assert.equal(consoleRoles.can(role, action), serverRoles.can(role, action), `${role} ${action}`);
    }
    const assignable = consoleRoles.assignableBy(role);
    for (const other of serverRoles.ROLES) {
      assert.equal(
        assignable.includes(other),
        serverRoles.rankOf(other) <= serverRoles.rankOf(role),
        `${role} assigns ${other}`,
      );
    }
  }
});
