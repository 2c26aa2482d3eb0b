/** What an operation does to the records: a role that may only read may call `read` operations only. */
export type Access = 'read' | 'write';
