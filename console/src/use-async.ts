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
