import { ApiError } from '../domain/shared/errors.ts';
import type { NestedCalls } from '../domain/workspace/actors.ts';

/** How deep bot code may nest action calls (an action calling an action calling…). */
export const MAX_ACTION_DEPTH = 8;
/** Action calls that one turn or one action call from outside may start, all levels together. */
export const MAX_NESTED_ACTION_CALLS = 100;

/**
 * The action calls that bot code makes, nested, under the call that began them (a turn, or an action
 * called through the API): one budget for all of them, a bound on depth, and an end: once a call has
 * answered, what it started and did not wait for may not start anything more.
 */
export class CallChain implements NestedCalls {
  private done = false;

  private constructor(
    readonly depth: number,
    private readonly budget: { remaining: number },
    private readonly parent: CallChain | undefined,
  ) {}

  static root(): CallChain {
    return new CallChain(0, { remaining: MAX_NESTED_ACTION_CALLS }, undefined);
  }

  get alive(): boolean {
    return !this.done && (this.parent?.alive ?? true);
  }

  /** The call has answered: what it started may not go on starting work. */
  end(): void {
    this.done = true;
  }

  /** Checks that this call may still make a call to the API; throws why not. */
  check(): void {
    if (!this.alive) {
      throw new ApiError(
        'LimitExceeded',
        'The call that started this code has already answered: what it started may not call the API any more',
      );
    }
  }

  /** The chain of an action this call calls; throws when the depth or the budget is spent. */
  nested(): NestedCalls {
    this.check();
    if (this.depth + 1 > MAX_ACTION_DEPTH) {
      throw new ApiError('LimitExceeded', `Actions may call actions at most ${MAX_ACTION_DEPTH} deep`);
    }
    if (this.budget.remaining <= 0) {
      throw new ApiError(
        'LimitExceeded',
        `At most ${MAX_NESTED_ACTION_CALLS} actions may be called from the code of one turn or action call`,
      );
    }
    this.budget.remaining--;
    return new CallChain(this.depth + 1, this.budget, this);
  }
}
