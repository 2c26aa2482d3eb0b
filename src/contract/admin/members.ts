import { Type } from 'typebox';
import { Email } from '../../domain/shared/schemas.ts';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';
import { ROLES } from '../../value-sets.ts';

const tag = 'Workspace members';
const Role = Type.Enum(ROLES);

export const memberOperations = [
  listOperation({
    id: 'listWorkspaceMembers',
    path: '/workspace-members',
    tag,
    summary: 'List the members of the workspace',
    key: 'members',
    item: Model.Member,
  }),
  operation({
    id: 'getWorkspaceMember',
    method: 'GET',
    path: '/workspace-members/me',
    access: 'read',
    tag,
    summary: 'Get your own membership of the workspace',
    response: Model.Member,
  }),
  operation({
    id: 'createWorkspaceMember',
    method: 'POST',
    path: '/workspace-members',
    access: 'write',
    tag,
    summary: 'Add a member to the workspace',
    description:
      'Adds the account with this email (created on first use) to the workspace. No email is sent: give the new member a first token with `parley token create --email <email>`.',
    body: { email: Email, role: Role, sendEmail: Type.Optional(Type.Boolean()) },
    response: Model.Member,
  }),
  operation({
    id: 'updateWorkspaceMember',
    method: 'PUT',
    path: '/workspace-members/:id',
    access: 'write',
    tag,
    summary: 'Change a member’s role',
    params: IdParam,
    body: { role: Type.Optional(Role) },
    response: Model.Member,
  }),
  operation({
    id: 'deleteWorkspaceMember',
    method: 'DELETE',
    path: '/workspace-members/:id',
    access: 'write',
    tag,
    summary: 'Remove a member from the workspace',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;
