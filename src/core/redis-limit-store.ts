/**
 * Rate-limit windows in Redis (`RATE_LIMIT_REDIS_URL`): one hash per limiter and key (`nds:rl:<key>`) with its
 * points and the end of its window, counted by a Lua script so that processes racing on a key never lose a
 * point. Window ends come from the caller's clock (tests move it); Redis's own expiry only removes windows a
 * while after they ended. Loaded only when the setting is there.
 */
import { Redis } from 'ioredis';
import type { LimitStore, LimitWindow } from './rate-limiter.js';

// KEYS[1]: the window; ARGV: points, duration (ms), now (ms), end of a new window (ms).
const ADD = `
local w = redis.call('HMGET', KEYS[1], 'p', 'r')
local r = tonumber(w[2])
if (not r) or r <= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'p', ARGV[1], 'r', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tonumber(ARGV[1]), ARGV[4]}
end
return {redis.call('HINCRBY', KEYS[1], 'p', ARGV[1]), w[2]}
`;

// KEYS[1]: the window; ARGV: points, end of the window they were counted in (ms).
const TAKE_BACK = `
local r = redis.call('HGET', KEYS[1], 'r')
if r == ARGV[2] then
  if redis.call('HINCRBY', KEYS[1], 'p', -tonumber(ARGV[1])) <= 0 then redis.call('DEL', KEYS[1]) end
end
return 0
`;

interface LimitCommands {
  ndsLimitAdd(key: string, points: number, durationMs: number, now: number, resetAt: string): Promise<[number, string]>;
  ndsLimitTakeBack(key: string, points: number, resetAt: string): Promise<number>;
}

export interface RedisLimitStoreOptions {
  url: string;
  /** Longest wait for one command, in ms. Default 500. */
  timeoutMs?: number;
  /** Key prefix; default `nds:rl:`. */
  prefix?: string;
}

export class RedisLimitStore implements LimitStore {
  readonly #redis: Redis & LimitCommands;
  readonly #prefix: string;
  readonly #firstConnection: Promise<void>;
  #connectedOnce = false;

  constructor(options: RedisLimitStoreOptions) {
    this.#prefix = options.prefix ?? 'nds:rl:';
    // A command sent while the connection is down fails at once (the fallback counts in memory meanwhile);
    // reconnection is tried every second at most.
    const redis = new Redis(options.url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: 1000,
      commandTimeout: options.timeoutMs ?? 500,
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    redis.on('error', () => {});
    this.#firstConnection = new Promise((resolve) => redis.once('ready', () => resolve()));
    void this.#firstConnection.then(() => (this.#connectedOnce = true));
    redis.defineCommand('ndsLimitAdd', { numberOfKeys: 1, lua: ADD });
    redis.defineCommand('ndsLimitTakeBack', { numberOfKeys: 1, lua: TAKE_BACK });
    this.#redis = redis as Redis & LimitCommands;
  }

  /** Resolves once connected. */
  ready(): Promise<void> {
    return this.#firstConnection;
  }

  async add(key: string, points: number, durationMs: number, now: number): Promise<LimitWindow> {
    // The first counts of a new process wait for its first connection (the fallback's timeout bounds the
    // wait); once connected, a command sent while the connection is down fails at once.
    if (!this.#connectedOnce) await this.#firstConnection;
    const [total, resetAt] = await this.#redis.ndsLimitAdd(this.#prefix + key, points, durationMs, now, String(now + durationMs));
    return { points: Number(total), resetAt: Number(resetAt) };
  }

  async takeBack(key: string, points: number, window: LimitWindow): Promise<void> {
    if (!this.#connectedOnce) await this.#firstConnection;
    await this.#redis.ndsLimitTakeBack(this.#prefix + key, points, String(window.resetAt));
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
