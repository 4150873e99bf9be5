/**
 * The request a piece of work serves. Every log line written while a request is served carries its id
 * (`core/log.ts` reads it here), however deep the call: the id follows the async chain (AsyncLocalStorage),
 * not the arguments. The id is answered as `X-Request-Id`; a valid incoming one is adopted, so one id follows
 * a request through a proxy and across nds processes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestContext {
  readonly requestId: string;
  /** The route pattern that answered (`/datasets/:id`), set once routing is done; never the path itself. */
  route: string | undefined;
}

/** One per process by nature: AsyncLocalStorage follows the async chains of the whole process. */
const current = new AsyncLocalStorage<RequestContext>();

/** A request id from elsewhere is adopted only in this shape: it goes into logs and headers unchanged. */
const ADOPTABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The incoming `X-Request-Id` when it is one we may adopt, else a new random id. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && ADOPTABLE_ID.test(value) ? value : randomUUID();
}

/** Runs `work` as part of serving the request `context`. */
export function serveWithin<T>(context: RequestContext, work: () => T): T {
  return current.run(context, work);
}

/** The request the calling code serves, if any. */
export function currentRequest(): RequestContext | undefined {
  return current.getStore();
}
