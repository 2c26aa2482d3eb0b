import { Type } from 'typebox';
import { TableRef } from './tables.ts';
import { Model } from '../models.ts';
import { operation } from '../operation.ts';

const tag = 'Table jobs';
const JobAnswer = Type.Object({ job: Model.TableJob });

export const jobOperations = [
  operation({
    id: 'exportTable',
    method: 'GET',
    path: '/tables/:table/export',
    access: 'read',
    tag,
    summary: 'Export a table’s rows to a file (a job)',
    description:
      'CSV (a header of column names, then the rows) or JSON (`{ table, rows }`, with the schema), gzipped unless `compress: false`. The job’s `outputFileId` is a Files API file once it is `completed`.',
    params: TableRef,
    query: {
      format: Type.Enum(['csv', 'json']),
      compress: Type.Optional(Type.Boolean({ default: true })),
    },
    response: JobAnswer,
  }),
  operation({
    id: 'importTable',
    method: 'POST',
    path: '/tables/:table/import',
    access: 'write',
    tag,
    summary: 'Add the rows of a file to a table (a job)',
    description:
      'A Files API file: CSV with a header of column names, or JSON (an array of rows, or `{ rows }` as exported), gzipped or not. The rows are added in one transaction: a file with a refused row adds none, and the job fails naming it.',
    params: TableRef,
    body: { fileId: Type.String({ minLength: 1 }) },
    response: JobAnswer,
  }),
  operation({
    id: 'getTableJobs',
    method: 'GET',
    path: '/tables/:table/jobs',
    access: 'read',
    tag,
    summary: 'The table’s recent jobs, newest first',
    params: TableRef,
    response: Type.Object({ jobs: Type.Array(Model.TableJob) }),
  }),
] as const;
