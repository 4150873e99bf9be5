/**
 * A short-lived cache of bearer-key look-ups, so that an authenticated request does not cost a database
 * round trip (on embedded PGlite, one query at a time, that round trip bounded the API at a tenth of a bare
 * route's throughput).
 *
 * Coherence: every write to `users` or `api_keys` that goes through this process's Kysely instance (services,
 * admin routes, raw `sql` statements, tests) empties the cache, through the plugin below, before and after
 * the statement runs, and again after a transaction that made such a write commits (`DatabaseHandle.afterCommit`,
 * set by `lifecycle.ts`): inside a transaction a write is seen by other connections only at the commit, and a
 * look-up in between reads the old row. Other commits (a worker's polls) leave the cache as it is. A look-up
 * that overlapped a write or a commit is not stored (generation check). Writes made by another process (a
 * second `nds serve` on the same PostgreSQL) are seen after at most `ttlMs`.
 */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { ApiKey, User } from '../db/accounts-tables.js';

/** A live key and its user, as a bearer look-up finds them. */
export interface KeyAuthentication {
  user: User;
  key: ApiKey;
}

const WATCHED_TABLES = new Set(['users', 'api_keys']);
const RAW_WRITE = /\b(?:update|insert\s+into|delete\s+from)\s+"?(?:users|api_keys)\b/i;

export class KeyCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { found: KeyAuthentication; expires: number }>();
  #generation = 0;

  /** `ttlMs` 0 turns the cache off. */
  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  /** The cached look-up of a key hash, or `undefined` (absent or expired). */
  get(keyHash: string): KeyAuthentication | undefined {
    const entry = this.#entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expires <= performance.now()) {
      this.#entries.delete(keyHash);
      return undefined;
    }
    return entry.found;
  }

  /** A token to pass to `set`: a write in between makes the `set` a no-op. */
  generation(): number {
    return this.#generation;
  }

  set(keyHash: string, found: KeyAuthentication, generation: number): void {
    if (this.#ttlMs === 0 || generation !== this.#generation) return;
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(keyHash, { found, expires: performance.now() + this.#ttlMs });
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** A Kysely plugin that empties this cache around every write to `users` or `api_keys`. */
  invalidationPlugin(): KyselyPlugin {
    const writes = new WeakSet<object>();
    return {
      transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => {
        if (writesWatchedTable(args.node)) {
          writes.add(args.queryId);
          this.clear();
        }
        return args.node;
      },
      transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => {
        if (writes.has(args.queryId)) this.clear();
        return args.result;
      },
    };
  }
}

/** True for a statement that writes `users` or `api_keys` (and not only a key's `last_used_at`). */
export function writesWatchedTable(node: RootOperationNode): boolean {
  switch (node.kind) {
    case 'SelectQueryNode':
      return false;
    case 'RawNode':
      return RAW_WRITE.test(node.sqlFragments.join(' '));
    case 'UpdateQueryNode':
      return !onlyTouchesLastUse(node.updates) && namesWatchedTable(node);
    case 'InsertQueryNode':
    case 'DeleteQueryNode':
    case 'MergeQueryNode':
      return namesWatchedTable(node);
    default:
      return false;
  }
}

/** `last_used_at` is bookkeeping that no authentication decision reads: writing it keeps the cache. */
function onlyTouchesLastUse(updates: readonly unknown[] | undefined): boolean {
  return !!updates?.length && updates.every((u) => (u as { column?: { column?: { name?: string } } }).column?.column?.name === 'last_used_at');
}

/** True when an operation tree names a watched table anywhere (writes are rare, so a walk is cheap enough). */
function namesWatchedTable(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(namesWatchedTable);
  if (!node || typeof node !== 'object') return false;
  const n = node as { kind?: string; name?: unknown };
  if (n.kind === 'IdentifierNode' && typeof n.name === 'string' && WATCHED_TABLES.has(n.name)) return true;
  return Object.values(node).some(namesWatchedTable);
}
