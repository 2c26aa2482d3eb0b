/** Fixed caps of the sandbox, next to the per-bot SandboxLimits of types.ts. */

/** Log lines kept per call (one more line says that later ones were dropped), and their length. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_CHARS = 2000;
/** Characters of log text kept per call, all lines together (a noisy call must not fill the store). */
export const MAX_LOG_CHARS_PER_CALL = 16_000;
/** Length of a failure message taken from bot code (an Error's name and message). */
export const MAX_MESSAGE_CHARS = 2000;
/** Host calls per call: a loop of un-awaited `client.x()` must not flood the API process. */
export const MAX_HOST_CALLS = 1000;
/**
 * The memory a whole sandbox process may hold (resident set), unless configured: what no isolate's own
 * heap limit sees (WebAssembly memory, array buffers, several isolates growing at once) is bounded here.
 */
export const DEFAULT_MAX_PROCESS_MEMORY_MB = 1024;
/** How often a sandbox process measures its memory. */
export const MEMORY_CHECK_INTERVAL_MS = 50;
/** isolated-vm refuses smaller isolates. */
export const MIN_MEMORY_MB = 8;
/**
 * The watchdog fires this long after isolated-vm's own timeout, so that code overrunning without an
 * `await` is stopped by V8 (which keeps the warm isolate) and only code that overruns after an
 * `await` (which V8's timeout does not cover) costs the isolate.
 */
export const WATCHDOG_GRACE_MS = 25;
/**
 * The parent's own backstop: a sandbox process that has not answered a call this long after its
 * time limit is stuck, and is killed and restarted.
 */
export const STUCK_PROCESS_GRACE_MS = 5000;
/** Loading a program into a new isolate (the bootstrap, and parsing every unit) must not take longer. */
export const LOAD_TIMEOUT_MS = 5000;
