import { Type } from 'typebox';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { ACTION_TYPE_MAX_LENGTH } from '../../domain/runtime/schemas.ts';
import { operation } from '../operation.ts';

export const actionOperations = [
  operation({
    id: 'callAction',
    method: 'POST',
    path: '/actions',
    access: 'write',
    tag: 'Actions',
    summary: 'Call an action',
    description:
      'A `type` without a colon calls the bot’s own action; `alias:action` an installed integration’s (the built-in chat channel offers `chat:sendEvent`). A cacheable action answers a repeated input from its cache (`meta.cached`).',
    body: { type: Type.String({ maxLength: ACTION_TYPE_MAX_LENGTH }), input: JsonObject },
    strictBody: true,
    response: Type.Object(
      { output: JsonObject, meta: Type.Object({ cached: Type.Boolean() }, { additionalProperties: false }) },
      { additionalProperties: false },
    ),
  }),
] as const;
