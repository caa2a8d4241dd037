// Types of the undici modules that src/http-request.ts imports by path: undici's own types cover
// only its index, so each is typed here with undici's types of what it exports.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const agent: typeof Agent;
  export default agent;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export default request;
}
declare module 'undici/lib/global.js' {
  import type { Dispatcher } from 'undici';
  const global: { readonly getGlobalDispatcher: () => Dispatcher };
  export default global;
}
declare module 'undici/lib/core/util.js' {
  const util: { readonly parseURL: (url: string) => URL };
  export default util;
}
declare module 'undici/lib/core/errors.js' {
  const errors: { readonly InvalidArgumentError: new (message: string) => Error };
  export default errors;
}
