import { ApiError } from '../domain/shared/errors.ts';

/** The bot failed: its code, or its workflows. Running its turn again would fail the same way. */
export class BotFailure extends Error {}

/** A unit of bot code failed: the turn stops, the failure is logged to the bot's logs. */
export class UnitFailure extends BotFailure {
  constructor(
    readonly unit: string,
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }

  /** The hosted product's error for the caller of an action: 504 for a time-out, 400 `Runtime` otherwise. */
  toApiError(): ApiError {
    if (this.kind === 'timeout') return new ApiError('OperationTimeout', this.message);
    return new ApiError('Runtime', this.message);
  }
}

/**
 * Whether running the turn again would fail the same way: the bot's code failed, or a rule of the API
 * refused what the turn asked. Anything else (the store unreachable, a fault of the server) may pass,
 * and the event is tried again rather than given up.
 */
export function isPermanentFailure(err: unknown): boolean {
  if (err instanceof BotFailure) return true;
  return err instanceof ApiError && err.code < 500;
}

export function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
