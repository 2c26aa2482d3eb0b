import { ApiError, RetryLater } from '../shared/errors.ts';
import { ProviderFailure } from './openai-compatible.ts';
import type { ModelChoice } from './providers.ts';
import type { Warning } from './schemas.ts';

/** What the clients fall back or retry on (`UPSTREAM_PROVIDER_FAILED`, as the hosted LLM integrations say). */
const UPSTREAM = { subtype: 'UPSTREAM_PROVIDER_FAILED' };

/** A provider's failure as the API answers it, once no model of the request could answer. */
export function providerError(failure: ProviderFailure, choice: ModelChoice): ApiError {
  switch (failure.kind) {
    case 'timeout':
      return new ApiError('OperationTimeout', failure.message, UPSTREAM);
    case 'rate_limited':
      return new RetryLater(failure.message, failure.retryAfterSeconds ?? 1, UPSTREAM);
    case 'model_not_found':
      // The path the hosted clients look for to try the next model of their own list.
      return new ApiError(
        'InvalidDataFormat',
        `data/model/id: the model "${choice.ref}" is not served: ${failure.message}`,
      );
    case 'invalid':
      return new ApiError('InvalidPayload', failure.message);
    case 'unavailable':
    case 'refused':
      return new ApiError('Unknown', failure.message, UPSTREAM, 502);
  }
}

export interface Attempt {
  choice: ModelChoice;
  /** The models tried before, that failed. */
  fallbackPath: string[];
  warnings: Warning[];
}

/**
 * Runs `attempt` on each model of the request in turn, until one answers: a model that is not served,
 * is rate-limited or unavailable passes the request to the next; a request the provider refuses as
 * such, or past the deadline, is answered at once. The deadline covers them all. Any other error
 * than a provider's failure ends the call as it is.
 */
export async function firstThatAnswers<T>(
  choices: ModelChoice[],
  run: (attempt: Attempt) => Promise<T>,
): Promise<T> {
  const fallbackPath: string[] = [];
  const warnings: Warning[] = [];
  let last: { failure: ProviderFailure; choice: ModelChoice } | undefined;
  for (const choice of choices) {
    if (choice.warning) warnings.push(choice.warning);
    try {
      const attemptWarnings =
        fallbackPath.length > 0
          ? [
              ...warnings,
              {
                type: 'fallback_used' as const,
                message: `Answered by "${choice.ref}" after ${fallbackPath.join(', ')} failed`,
              },
            ]
          : [...warnings];
      return await run({ choice, fallbackPath: [...fallbackPath], warnings: attemptWarnings });
    } catch (err) {
      if (!(err instanceof ProviderFailure)) throw err;
      if (err.kind === 'invalid' || err.kind === 'timeout') throw providerError(err, choice);
      last = { failure: err, choice };
      fallbackPath.push(choice.ref);
    }
  }
  if (!last) throw new ApiError('InvalidPayload', 'model names no model');
  throw providerError(last.failure, last.choice);
}
