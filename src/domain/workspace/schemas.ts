import { Type } from 'typebox';
import type { Static } from 'typebox';
import { INT32, Timestamp } from '../shared/schemas.ts';
import { ROLES } from '../../value-sets.ts';

// The records of accounts, members and workspaces as the APIs answer them, and what changes them: a
// module without the store, so the contract declares the Admin API with them.

export const AccountSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  displayName: Type.Optional(Type.String()),
  emailVerified: Type.Boolean(),
  profilePicture: Type.Optional(Type.String()),
  createdAt: Timestamp,
});
export type Account = Static<typeof AccountSchema>;

/** What an account changes of itself (`updateAccount`): the name and picture its colleagues and visitors see. */
export const UpdateAccountBodySchema = Type.Object({
  displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  profilePicture: Type.Optional(Type.String({ maxLength: 2048 })),
  /** The hosted API's refresh from the identity provider: there is none here, so it changes nothing. */
  refresh: Type.Optional(Type.Boolean()),
});
export type UpdateAccountBody = Static<typeof UpdateAccountBodySchema>;

export const PersonalAccessTokenSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  note: Type.String(),
});
export type PersonalAccessToken = Static<typeof PersonalAccessTokenSchema>;

export const MemberSchema = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  email: Type.String(),
  createdAt: Timestamp,
  role: Type.Enum(ROLES),
  displayName: Type.Optional(Type.String()),
  profilePicture: Type.Optional(Type.String()),
});
export type Member = Static<typeof MemberSchema>;

const Profile = {
  about: Type.Optional(Type.String()),
  profilePicture: Type.Optional(Type.String()),
  contactEmail: Type.Optional(Type.String()),
  website: Type.Optional(Type.String()),
  socialAccounts: Type.Optional(Type.Array(Type.String())),
  isPublic: Type.Optional(Type.Boolean()),
};

export type WorkspaceProfile = Static<ReturnType<typeof Type.Object<typeof Profile>>>;

export const WorkspaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ownerId: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  botCount: Type.Integer(),
  billingVersion: Type.Literal('v4'),
  plan: Type.Literal('community'),
  blocked: Type.Boolean(),
  spendingLimit: Type.Number(),
  ...Profile,
  handle: Type.Optional(Type.String()),
  activeTrialId: Type.Null(),
});
export type Workspace = Static<typeof WorkspaceSchema>;

/** A workspace's public name, which prefixes the names of the integrations it deploys (`handle/name`). */
export const Handle = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,48}$' });

export const WorkspaceChangesSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  spendingLimit: Type.Optional(Type.Integer({ ...INT32, minimum: 0 })),
  handle: Type.Optional(Handle),
  ...Profile,
});
export type WorkspaceChanges = Static<typeof WorkspaceChangesSchema>;
