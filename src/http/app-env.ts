import type { Deps } from '../deps.js';
import type { ApiKey, User } from '../db/accounts-tables.js';

/** Who made a request, once an auth middleware has run. */
export interface Caller {
  user: User;
  /** The API key that authenticated the request (bearer); undefined for a browser session. */
  key?: ApiKey;
  /** Hash of the browser session that authenticated the request; undefined for a bearer key. */
  sessionHash?: string;
}

/** The Hono environment of every nds route: typed variables set by middleware. */
export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    caller?: Caller;
  };
}
