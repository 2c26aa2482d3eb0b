import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../domain/shared/errors.ts';
import { bearerToken, HEADERS, userKeyOf } from './headers.ts';
import { optionalPathParam } from './channel-routes.ts';

/** Requests per minute: per end user on the Chat API and webchat, per webhook on the ingress, per token on the other APIs. */
export interface RateLimits {
  chatPerMinute: number;
  apiPerMinute: number;
  /** Shared counts across processes; undefined: each process counts its own. */
  redis?: Redis | undefined;
}

/** Who a request is counted against: a credential never leaves the process as it is, only its hash. */
type Caller = (request: FastifyRequest) => string | undefined;

const ofUserKey: Caller = userKeyOf;
const ofToken: Caller = (request) => bearerToken(request.headers[HEADERS.authorization]);

const ofWebhook: Caller = (request) => optionalPathParam(request, 'webhookId');

const CALLERS = { chat: ofUserKey, api: ofToken, webhook: ofWebhook } as const;

/**
 * Counts the requests of the routes registered in `scope` after it, per caller (its credential, or its
 * address when it shows none), and answers 429 `RateLimited` with `Retry-After` past the limit.
 */
export async function limitRequests(
  scope: FastifyInstance,
  limits: RateLimits,
  kind: keyof typeof CALLERS,
): Promise<void> {
  const callerOf = CALLERS[kind];
  const max = kind === 'chat' ? limits.chatPerMinute : limits.apiPerMinute;
  await scope.register(rateLimit, {
    max,
    timeWindow: 60_000,
    ...(limits.redis && { redis: limits.redis }),
    nameSpace: `parley-rate-${kind}-`,
    keyGenerator: (request) => {
      const credential = callerOf(request);
      return credential === undefined
        ? `ip:${request.ip}`
        : `key:${createHash('sha256').update(credential).digest('base64url').slice(0, 22)}`;
    },
    // A store that does not answer must not take the API down with it.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'RateLimited',
        `Too many requests: at most ${context.max} a minute; retry in ${context.after}`,
      ),
  });
}
