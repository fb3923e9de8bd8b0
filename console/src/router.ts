import { useEffect, useState } from 'preact/hooks';
import { parseHash, type Route } from './hash-route.ts';

export { href, parseHash, type Route } from './hash-route.ts';

/** Goes to another route (a new history entry, so Back returns). */
export function navigate(target: string): void {
  if (location.hash !== target) location.hash = target;
}

/** The current route; the component re-renders when the address changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
