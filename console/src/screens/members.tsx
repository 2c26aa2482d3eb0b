// The workspace's members and their roles. Managers and above add members, change roles (up to their
// own) and remove members; everyone else reads.
import { useState } from 'preact/hooks';
import { admin } from '../api/admin.ts';
import { MAX_LISTED } from '../api/client.ts';
import { collect } from '../../../src/contract/client.ts';
import type { Member, Role } from '../api/types.ts';
import { assignableBy, can } from '../roles.ts';
import { useCurrentSession } from '../session.tsx';
import {
  ConfirmButton,
  Field,
  InlineError,
  ListTable,
  Loaded,
  PageHeader,
  Time,
  valueOf,
} from '../ui/components.tsx';
import type { Column } from '../ui/components.tsx';
import { useAction, useLoad } from '../hooks.ts';

export function Members() {
  const session = useCurrentSession();
  const mayManage = can(session.role, 'members.manage');
  const assignable = assignableBy(session.role);
  const members = useLoad(
    () => collect(admin.listWorkspaceMembers, 'members', {}, MAX_LISTED),
    [session.workspace.id],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [added, setAdded] = useState<string | undefined>(undefined);
  const add = useAction(async () => {
    const member = await admin.createWorkspaceMember(email.trim(), role);
    setAdded(member.email);
    setEmail('');
    members.reload();
  });
  const update = useAction(async (member: Member, next: Role) => {
    const updated = await admin.updateWorkspaceMember(member.id, next);
    members.set(
      (current) =>
        current && { ...current, items: current.items.map((m) => (m.id === member.id ? updated : m)) },
    );
  });
  const remove = useAction(async (member: Member) => {
    await admin.deleteWorkspaceMember(member.id);
    members.set(
      (current) => current && { ...current, items: current.items.filter((m) => m.id !== member.id) },
    );
  });
  /** Members whose role this operator may change: below or at their own, and not themselves. */
  const changeable = (member: Member) =>
    mayManage && assignable.includes(member.role) && member.userId !== session.account.id;
  const removeColumn: Column<Member> = {
    label: 'Actions',
    hiddenLabel: true,
    cell: (member) =>
      changeable(member) && (
        <ConfirmButton
          class="small"
          label="Remove"
          confirm={`Remove ${member.email}?`}
          onConfirm={() => void remove.run(member)}
        />
      ),
  };

  return (
    <>
      <PageHeader
        title="Members"
        subtitle={`Who can use workspace ${session.workspace.name}, and their roles`}
      />
      {mayManage && (
        <form
          class="panel inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void add.run();
          }}
        >
          <Field label="Email">
            <input type="email" required value={email} onInput={(e) => setEmail(valueOf(e))} />
          </Field>
          <Field label="Role">
            <select value={role} onChange={(e) => setRole(valueOf(e) as Role)}>
              {assignable.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={add.busy}>
            Add member
          </button>
          <InlineError error={add.error} />
        </form>
      )}
      {added && (
        <p class="notice" role="status">
          Added {added}. Parley sends no email: give them a first token with{' '}
          <code>npm run parley -- token create --email {added}</code> on the server.
        </p>
      )}
      <InlineError error={update.error ?? remove.error} />
      <Loaded {...members}>
        {({ items }) => (
          <ListTable
            items={items}
            columns={[
              {
                label: 'Email',
                cell: (member) => (
                  <>
                    {member.email}
                    {member.userId === session.account.id && <span class="tag">you</span>}
                  </>
                ),
              },
              {
                label: 'Role',
                cell: (member) =>
                  changeable(member) ? (
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      disabled={update.busy}
                      onChange={(e) => void update.run(member, valueOf(e) as Role)}
                    >
                      {assignable.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  ),
              },
              { label: 'Member since', wide: true, cell: (member) => <Time iso={member.createdAt} /> },
              ...(mayManage ? [removeColumn] : []),
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
