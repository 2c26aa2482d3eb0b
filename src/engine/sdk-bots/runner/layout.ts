/**
 * What an SDK bundle's process finds inside its sandbox, where: written once for the host that sets the
 * sandbox up (bot-process.ts) and the runner inside it.
 */

/** The runner, its lazily loaded fetch proxy setup, and the bundle it runs. */
export const RUNNER_FILE = '/parley/runner.cjs';
export const FETCH_PROXY_FILE = '/parley/fetch-proxy.cjs';
export const BUNDLE_FILE = '/parley/bundle.cjs';
/** This server's API, served on a Unix socket of the sandbox's folder. */
export const API_SOCKET = '/parley/run/api.sock';
/** The egress proxy; absent when the sandbox may reach nothing but the API. */
export const EGRESS_SOCKET = '/parley/run/egress.sock';
/** Set to `on` when the egress proxy serves this sandbox. Read and removed by the runner. */
export const EGRESS_ENV = 'PARLEY_SANDBOX_EGRESS';
/** What the runner exits with when the bundle fails to load. */
export const LOAD_FAILED_EXIT_CODE = 78;
