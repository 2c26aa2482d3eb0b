import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../domain/shared/errors.ts';
import { addressKey } from './client-address.ts';
import { optionalPathParam } from './channel-routes.ts';
import { HEADERS } from '../contract/headers.ts';
import { bearerToken } from './headers.ts';

/** Requests per minute: per client address, and per verified end user, token or webhook. */
export interface RateLimits {
  chatPerMinute: number;
  apiPerMinute: number;
  addressPerMinute: number;
  /** Shared counts across processes; undefined: each process counts its own. */
  redis?: Redis | undefined;
}

/** A credential never leaves the process as it is, only its hash. */
const hashOf = (credential: string) =>
  createHash('sha256').update(credential).digest('base64url').slice(0, 22);

/**
 * How one group of APIs counts its requests. Every request counts against its client's address; once
 * the API has verified who calls (its own authentication ran), against that principal too.
 */
interface Counting {
  /** The principal an API verified, as a counter's key; undefined when it verified none. */
  principal: (request: FastifyRequest) => string | undefined;
  principalPerMinute: (limits: RateLimits) => number;
  /**
   * Whether a request from an address past its limit may pass all the same, because the credential it
   * shows is valid: its principal's own count bounds it. Absent: none may. On the Chat API anyone can
   * make a user and so a valid key, so an address's limit holds whatever key its requests show; tokens
   * and webhooks are given by members, and the address of a server shared by many (a proxy on the same
   * machine, the bot processes on loopback, a webhook sender's) must not stop the valid ones.
   */
  validDespiteAddress?: (request: FastifyRequest) => Promise<boolean>;
}

const COUNTINGS = {
  api: (app: FastifyInstance): Counting => ({
    principal: (request) => {
      const token = bearerToken(request.headers[HEADERS.authorization]);
      return request.principal && token !== undefined ? `token:${hashOf(token)}` : undefined;
    },
    principalPerMinute: (limits) => limits.apiPerMinute,
    validDespiteAddress: async (request) => {
      const token = bearerToken(request.headers[HEADERS.authorization]);
      return token !== undefined && (await app.domain.auth.authenticate(token)) !== undefined;
    },
  }),
  chat: (): Counting => ({
    // By the key's user as the bot knows it (its foreign id), which a route that queues a turn has
    // before its user is read (`channelCaller`): the same key for every route of both channel APIs.
    principal: (request) => {
      const caller = request.chatSession ?? request.chatTurn ?? request.webchatSession ?? request.webchatTurn;
      return caller && `user:${caller.bot.botId}:${caller.foreignUserId}`;
    },
    principalPerMinute: (limits) => limits.chatPerMinute,
  }),
  webhook: (app: FastifyInstance): Counting => ({
    principal: (request) =>
      request.reachedWebhook && `webhook:${optionalPathParam(request, 'webhookId') ?? ''}`,
    principalPerMinute: (limits) => limits.apiPerMinute,
    validDespiteAddress: async (request) => {
      const webhookId = optionalPathParam(request, 'webhookId');
      if (webhookId === undefined) return false;
      return app.domain.webhookIngress.reach(webhookId).then(
        () => true,
        () => false,
      );
    },
  }),
} as const;

type Counter = (request: FastifyRequest) => ReturnType<ReturnType<FastifyInstance['createRateLimit']>>;

/** A counter of requests a minute in its own store (a Redis namespace, or this process's memory). */
async function counter(
  scope: FastifyInstance,
  limits: RateLimits,
  nameSpace: string,
  max: number,
  keyOf: (request: FastifyRequest) => string,
): Promise<Counter> {
  let count: Counter | undefined;
  // A scope of its own: the plugin keeps one store per registration, and decorates the scope with it.
  await scope.register(async (own) => {
    await own.register(rateLimit, {
      global: false,
      max,
      timeWindow: 60_000,
      keyGenerator: keyOf,
      ...(limits.redis && { redis: limits.redis }),
      nameSpace,
      // A store that does not answer must not take the API down with it.
      skipOnError: true,
    });
    count = own.createRateLimit();
  });
  if (!count) throw new Error('the rate limit plugin did not register');
  return count;
}

/** Counts one request; past the limit, answers 429 `RateLimited` with `Retry-After` unless `mayPass` says otherwise. */
async function charge(
  count: Counter,
  request: FastifyRequest,
  reply: FastifyReply,
  whose: string,
  mayPass?: () => Promise<boolean>,
): Promise<void> {
  const counted = await count(request);
  if (counted.isAllowed) return;
  reply
    .header('x-ratelimit-limit', counted.max)
    .header('x-ratelimit-remaining', counted.remaining)
    .header('x-ratelimit-reset', counted.ttlInSeconds);
  if (!counted.isExceeded || (mayPass && (await mayPass()))) return;
  reply.header(HEADERS.retryAfter, counted.ttlInSeconds);
  throw new ApiError(
    'RateLimited',
    `Too many requests ${whose}: at most ${counted.max} a minute; retry in ${counted.ttlInSeconds} s`,
  );
}

/**
 * Counts the requests of the routes registered in `scope` after it: each against its client's address
 * (`request.ip`, through trusted proxies) before anything else, and against the principal the API
 * verified (after its authentication, before the body is read). Past a limit: 429 `RateLimited` with
 * `Retry-After`. A credential that does not verify is no principal: it counts against its address only.
 */
export async function limitRequests(
  scope: FastifyInstance,
  limits: RateLimits,
  kind: keyof typeof COUNTINGS,
): Promise<void> {
  const counting = COUNTINGS[kind](scope);
  const byAddress = await counter(
    scope,
    limits,
    `parley-rate-${kind}-address-`,
    limits.addressPerMinute,
    (request) => addressKey(request.ip),
  );
  // Each request's principal, as its counter's key: worked out once (a token's is a hash).
  const principals = new WeakMap<FastifyRequest, string>();
  const byPrincipal = await counter(
    scope,
    limits,
    `parley-rate-${kind}-`,
    counting.principalPerMinute(limits),
    (request) => principals.get(request) ?? '',
  );
  const { validDespiteAddress } = counting;

  scope.addHook('onRequest', async (request, reply) => {
    await charge(
      byAddress,
      request,
      reply,
      'from this address',
      validDespiteAddress && (() => validDespiteAddress(request)),
    );
  });
  // After every onRequest hook, the APIs' authentication among them; before the body is read.
  scope.addHook('preParsing', async (request, reply, payload) => {
    const principal = counting.principal(request);
    if (principal !== undefined) {
      principals.set(request, principal);
      await charge(byPrincipal, request, reply, 'of this caller');
    }
    return payload;
  });
}
