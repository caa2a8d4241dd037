/**
 * undici's HTTP client without the rest of undici: its `Agent` and its `request` API, loaded from
 * undici's own modules. `import 'undici'` also compiles fetch, WebSocket, EventSource, the cache
 * stores, the mock agents and the proxy agents at once, none of which the daemon uses: about
 * 5 MiB more resident memory for the life of the daemon (docs/performance.md). `request` is what
 * undici's exported one does (its `makeDispatcher`), with undici's URL parsing and errors, for the
 * calls modelwatch makes: a URL string and options with a method.
 */
import type { Dispatcher } from 'undici';
import agent from 'undici/lib/dispatcher/agent.js';
import apiRequest from 'undici/lib/api/api-request.js';
import errors from 'undici/lib/core/errors.js';
import util from 'undici/lib/core/util.js';
import undiciGlobal from 'undici/lib/global.js';

/** undici's `Agent`: a pool of connections per origin. */
export const Agent = agent;

/** Options of {@link request}: undici's, with the URL given apart and an optional dispatcher. */
export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { readonly dispatcher?: Dispatcher | undefined };

/**
 * undici's `request(url, options)`: the URL parsed and checked as undici does (it throws undici's
 * InvalidArgumentError for one it refuses), sent through `options.dispatcher` or undici's global one.
 */
export function request(url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  if (url === '') throw new errors.InvalidArgumentError('invalid url');
  const parsed = util.parseURL(url);
  const { dispatcher = undiciGlobal.getGlobalDispatcher(), ...rest } = options;
  return apiRequest.call(dispatcher, { ...rest, origin: parsed.origin, path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname });
}
