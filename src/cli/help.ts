/** Whether the command's arguments ask for its help (`--help` or `-h` before any `--`). */
export function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Prints a command's help on stdout; the command then succeeds. */
export function printHelp(text: string): number {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}
