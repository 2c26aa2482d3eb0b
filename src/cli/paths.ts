import path from 'node:path';

/**
 * A path the user typed, from the folder they typed it in. `npm run parley -- …` runs the command in the
 * package's folder and names the user's folder in INIT_CWD; `npx parley` and an installed `parley` run
 * in the user's folder.
 */
export function userPath(given: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.npm_lifecycle_event === 'parley' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
  return path.resolve(base, given);
}
