import { once } from 'node:events';
import type { FastifyPluginAsync } from 'fastify';
import { generateTextStream } from '../../contract/cognitive/index.ts';
import { COGNITIVE_HANDLERS } from '../../handlers/cognitive/index.ts';
import { errorResponses } from '../../contract/models.ts';
import type { GenerationRequest } from '../../domain/llm/schemas.ts';
import { botActorOf, requireAuth } from '../auth.ts';
import { headersOf } from '../headers.ts';
import { allowCors, OPERATOR_CORS_SETTING, PLATFORM_HEADERS } from '../cors.ts';
import type { PlatformApiOptions } from '../cors.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { routeOperations } from '../operations.ts';

const NDJSON = 'application/x-ndjson';

/**
 * The Cognitive API, under `/v2/cognitive`: bots' model calls as the hosted platform serves them, as
 * one bot (`x-bot-id`, as on the Runtime API). Besides the declared operations, `generate-text-stream`
 * answers NDJSON, a line per chunk, each written as the provider sends its tokens.
 */
export const cognitiveApi: FastifyPluginAsync<PlatformApiOptions> = async (app, { corsOrigins }) => {
  app.addHook('onRoute', (route) => {
    // The audio to transcribe may come in the request, as a data: URI.
    route.bodyLimit ??= route.url.endsWith('/transcribe-audio')
      ? PAYLOAD_LIMITS.audio
      : PAYLOAD_LIMITS.runtime;
  });
  if (corsOrigins)
    await allowCors(app, {
      origins: () => corsOrigins,
      setIn: OPERATOR_CORS_SETTING,
      allowedHeaders: PLATFORM_HEADERS,
    });
  requireAuth(app, app.domain, 'bot');
  routeOperations(app, COGNITIVE_HANDLERS, botActorOf);

  app.post<{ Body: GenerationRequest }>(
    generateTextStream.path,
    {
      config: { access: generateTextStream.access },
      schema: {
        operationId: generateTextStream.id,
        tags: [generateTextStream.tag],
        summary: generateTextStream.summary,
        ...(generateTextStream.description !== undefined && { description: generateTextStream.description }),
        ...(generateTextStream.body && { body: generateTextStream.body }),
        response: { ...errorResponses },
      },
    },
    async (request, reply) => {
      // The answer's own close, not its socket's: a kept-alive connection carries many answers, and a
      // listener per request on it would pile up until it closes.
      const caller = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) caller.abort();
      });
      const batches = app.domain.llm.generateStream(botActorOf(request), request.body, caller.signal);
      // The first chunk is awaited before the answer starts: a failure until then gets its status.
      const first = await batches.next();
      // Written straight to the socket rather than piped from a stream: a token's line is one write,
      // without a readable stream's and an async generator's turns of the event loop in between.
      const inherited = headersOf(reply);
      reply.hijack();
      const answer = reply.raw;
      answer.writeHead(200, { ...inherited, 'content-type': NDJSON, 'cache-control': 'no-cache' });
      try {
        for (let next = first; !next.done; next = await batches.next()) {
          if (answer.writableEnded) continue;
          // A batch's lines go out in one write: each write is a system call of its own.
          let lines = '';
          let finished = false;
          for (const chunk of next.value) {
            lines += `${JSON.stringify(chunk)}\n`;
            finished ||= chunk.finished === true;
          }
          // The finished chunk is the answer's last: it ends there, while the gateway records the call.
          if (finished) answer.end(lines);
          else if (!answer.write(lines)) await once(answer, 'drain', { signal: caller.signal });
        }
        if (!answer.writableEnded) answer.end();
      } catch (err) {
        if (answer.writableEnded) {
          // The caller has the whole answer: what failed after it (the call's record) is logged.
          request.log.error({ err }, 'a model call answered in full could not be recorded');
        } else {
          // The status is sent: the stream ends without its last line, and the reason is logged here.
          if (!caller.signal.aborted) request.log.error({ err }, 'a model stream ended with an error');
          answer.destroy();
        }
      } finally {
        await batches.return(undefined);
      }
    },
  );
};
