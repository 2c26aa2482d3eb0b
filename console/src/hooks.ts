// Loading data, acting, and polling, the same way on every screen.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  /** Replaces the data in place (after a change the screen made itself). */
  set: (update: (data: T | undefined) => T | undefined) => void;
}

/** Runs `load` when the screen shows and whenever `deps` change; the newest call wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(undefined);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setLoading(false);
      },
      (err: unknown) => {
        if (!current) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
    // `load` is a new function on every render; what it depends on is in `deps`.
  }, [...deps, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data, error, loading, reload, set: setData };
}

export interface Action<A extends unknown[]> {
  run(...args: A): Promise<boolean>;
  busy: boolean;
  error: unknown;
  clear(): void;
}

/** A change the operator asks for: busy while it runs, its error kept to be shown beside the control. */
export function useAction<A extends unknown[]>(act: (...args: A) => Promise<unknown>): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await act(...args);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

/** Whether the page is visible: live views stop polling while it is hidden. */
export function useVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const update = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/**
 * Calls `poll` every `intervalMs` while the page is visible and `enabled`, never two at once; the error of
 * the last call (undefined once one succeeds) is returned, so the view can say it is reconnecting. A change
 * of `restart` polls again at once (what the poll reads changed, or the screen wants it fresh).
 */
export function usePolling(
  poll: (signal: AbortSignal) => Promise<void>,
  intervalMs: number,
  enabled = true,
  restart: unknown[] = [],
): unknown {
  const visible = useVisible();
  const [error, setError] = useState<unknown>(undefined);
  const latest = useRef(poll);
  latest.current = poll;
  useEffect(() => {
    if (!visible || !enabled) return;
    const stop = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        await latest.current(stop.signal);
        if (!stop.signal.aborted) setError(undefined);
      } catch (err) {
        if (!stop.signal.aborted) setError(err);
      }
      if (!stop.signal.aborted) timer = setTimeout(() => void tick(), intervalMs);
    };
    void tick();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, [visible, enabled, intervalMs, ...restart]);
  return error;
}
