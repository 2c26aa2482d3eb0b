/**
 * Loaded by the runner at a bundle's first `fetch` (undici is large: a bot that never fetches does not
 * pay for it): Node's own fetch then goes through the proxy named by HTTP(S)_PROXY, but for NO_PROXY.
 */
import { EnvHttpProxyAgent, setGlobalDispatcher } from 'undici';

export function useProxyForFetch(): void {
  setGlobalDispatcher(new EnvHttpProxyAgent());
}
