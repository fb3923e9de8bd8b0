import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** What a page shows while it loads, once it has loaded, or when loading failed. */
export type Async<T> =
  | { state: 'loading' }
  | { state: 'ready'; value: T }
  | { state: 'error'; error: unknown };

/**
 * Runs `load` when `deps` change (showing the loading state) and on `reload()` (keeping what is on
 * screen until the new answer replaces it, so a refresh after an action does not blank the page);
 * an answer that arrives after a newer load started is dropped, so fast filter changes never show
 * a stale page.
 */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): [Async<T>, () => void] {
  const [result, setResult] = useState<Async<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  const lastRound = useRef(round);
  // A layout effect: the request leaves as soon as the page is in the DOM, not a frame later.
  useLayoutEffect(() => {
    const ticket = ++latest.current;
    const refresh = round !== lastRound.current;
    lastRound.current = round;
    if (!refresh) setResult({ state: 'loading' });
    load().then(
      (value) => {
        if (ticket === latest.current) setResult({ state: 'ready', value });
      },
      (error: unknown) => {
        if (ticket === latest.current) setResult({ state: 'error', error });
      },
    );
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return [result, reload];
}

/** An action a button starts (a release, an add, an import): whether it runs, and how it failed. */
export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `work` unless one is running; a failure is kept in `error` for the page to show. */
  run(work: () => Promise<void>): Promise<void>;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const running = useRef(false);
  const run = useCallback(async (work: () => Promise<void>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
