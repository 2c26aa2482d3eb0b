/** Header names of the wire protocol, lower-case as Node presents them. */
export const HEADERS = {
  authorization: 'authorization',
  workspaceId: 'x-workspace-id',
  botId: 'x-bot-id',
  integrationId: 'x-integration-id',
  integrationAlias: 'x-integration-alias',
  userKey: 'x-user-key',
} as const;

export function headerValue(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? undefined : v;
}

/** The token of an `Authorization: Bearer <token>` header, if there is one. */
export function bearerToken(value: string | string[] | undefined): string | undefined {
  const header = headerValue(value);
  const match = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}
