/** A mistake of the command's user: printed as one line, without a stack. */
export class CliError extends Error {
  readonly isCliError = true;
}
