import { Type } from 'typebox';
import {
  FileKey,
  Text,
  UpdateFileMetadataBodySchema,
  UploadableFileSchema,
  UpsertFileBodySchema,
  MAX_IDS_FILTER,
  TagFilterSchema,
} from '../../domain/files/schemas.ts';
import { HEADERS } from '../headers.ts';
import { EmptySchema } from '../schemas.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Files';
const FileAnswer = Type.Object({ file: Model.File });
/** `{id}` of the file routes: a file's id, or its key (keys may hold `/`, sent as %2F). */
const FileRef = { id: Text({ minLength: 1, description: 'The file’s id or key' }) };

export const fileOperations = [
  operation({
    id: 'upsertFile',
    method: 'PUT',
    path: '/files',
    access: 'write',
    tag,
    summary: 'Create or reset a file, and get the URL to upload its content to',
    description:
      'The same key resets the same file (its content is erased). PUT the content to `file.uploadUrl` (signed, valid for an hour, any content type): the file is then `upload_completed`, or `indexing_pending` with `index: true`.',
    body: UpsertFileBodySchema.properties,
    response: Type.Object({ file: UploadableFileSchema }),
  }),
  operation({
    id: 'getFile',
    method: 'GET',
    path: '/files/:id',
    access: 'read',
    tag,
    summary: 'Get a file (with a fresh download URL)',
    params: FileRef,
    response: FileAnswer,
  }),
  listOperation({
    id: 'listFiles',
    path: '/files',
    tag,
    summary: 'List files',
    description: 'Newest first unless sorted otherwise; files the caller may not see are left out.',
    query: {
      sortField: Type.Optional(Type.Enum(['key', 'size', 'createdAt', 'updatedAt', 'status'])),
      sortDirection: Type.Optional(Type.Enum(['asc', 'desc'])),
      tags: Type.Optional(TagFilterSchema),
      ids: Type.Optional(Type.Array(Text(), { maxItems: MAX_IDS_FILTER })),
      indexed: Type.Optional(Type.Boolean()),
    },
    key: 'files',
    item: Model.File,
  }),
  operation({
    id: 'updateFileMetadata',
    method: 'PUT',
    path: '/files/:id',
    access: 'write',
    tag,
    summary: 'Update a file’s metadata, tags, access policies or expiry',
    description:
      'Metadata and tags are merged (`null` deletes a key); access policies are replaced; `expiresAt: null` clears the expiry.',
    params: FileRef,
    body: UpdateFileMetadataBodySchema.properties,
    response: FileAnswer,
  }),
  operation({
    id: 'deleteFile',
    method: 'DELETE',
    path: '/files/:id',
    access: 'write',
    tag,
    summary: 'Delete a file, its content and its passages',
    params: FileRef,
    response: EmptySchema,
  }),
  operation({
    id: 'copyFile',
    method: 'POST',
    path: '/files/:idOrKey/:destinationKey',
    access: 'write',
    tag,
    summary: 'Copy a file to another key (of this bot or of another bot of the workspace)',
    description:
      'A taken key answers 409 `AlreadyExists` unless `overwrite` (and then only the caller’s own file is replaced).',
    params: { idOrKey: FileRef.id, destinationKey: FileKey },
    body: { overwrite: Type.Optional(Type.Boolean()) },
    headers: { [HEADERS.destinationBotId]: Type.Optional(Text({ minLength: 1 })) },
    response: FileAnswer,
  }),
] as const;
