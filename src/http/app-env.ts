import type { KeyCache } from '../accounts/key-cache.js';
import type { DeviceLimits } from '../accounts/device-limits.js';
import type { SignInLimits } from '../accounts/sign-in-limits.js';
import type { OwnerSetup } from '../accounts/owner-setup.js';
import type { RateLimits } from '../core/rate-limiter.js';
import type { ApiKey, User } from '../db/accounts-tables.js';
import type { DatasetLimits } from '../datasets/dataset-limits.js';
import type { Deps } from '../deps.js';
import type { Gateway } from '../gateway/gateway.js';
import type { FetchSlots } from '../git/fetch-slots.js';
import type { RateLimiter } from '../core/rate-limiter.js';
import type { RecordingCaches } from '../recordings/recording-caches.js';
import type { VisibilityGate } from '../gateway/visibility-gate.js';

/**
 * What the HTTP server's routes receive: the `Deps` every service takes, plus the server's own long-lived
 * services, each made once by `lifecycle.ts` and passed here, never found through a module-level map.
 */
export interface ServerDeps extends Deps {
  /** Recent bearer-key look-ups; emptied by every write to users or api_keys through `db`. */
  keyCache: KeyCache;
  /** The process's rate-limit service: named limiters counted in the shared store (decision 0017). */
  rateLimits: RateLimits;
  signInLimits: SignInLimits;
  deviceLimits: DeviceLimits;
  /** Member-added mails and sandbox datasets made, per account (`datasets/dataset-limits.ts`). */
  datasetLimits: DatasetLimits;
  /** The process's one browser gateway: the `/zarrproxy` mount and the gateway host share its cache. */
  gateway: Gateway;
  /**
   * Which datasets' Zarr copies `/objects/` serves to anyone: remembered for 1 s at most, forgotten at once
   * (in this process) when a dataset's visibility changes or it is deleted.
   */
  objectVisibility: VisibilityGate;
  /** The one-time setup link of a service without an owner (`/setup`). */
  ownerSetup: OwnerSetup;
  /** Requests to `/mcp` per caller (`mcp/mcp-limits.ts`). */
  mcpLimits: RateLimiter;
  /** Anonymous requests to the catalogue and the dataset search, per address (`http/catalogue-limits.ts`). */
  catalogueLimits: RateLimiter;
  /** The recordings read side's caches: store look-ups, store metadata, decoded chunks (`recordings/recording-caches.ts`). */
  recordingCaches: RecordingCaches;
  /** The clones and fetches of hosted repositories running on this process, per client and in all (`git/fetch-slots.ts`). */
  gitFetches: FetchSlots;
}

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
    deps: ServerDeps;
    requestId: string;
    caller?: Caller;
    /** Set by a page of the signal viewer (`security-headers.ts` `servesViewer`); `embed`: other sites may frame it. */
    viewerPage?: 'page' | 'embed';
  };
}
