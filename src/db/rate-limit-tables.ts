/** The shared rate-limit windows (`rate_limits`), read and written only by `db/rate-limit-store.ts`. */
export interface RateLimitsTable {
  /** `<limiter>:<sha256 of the key>`. */
  key: string;
  points: number;
  /** End of the window, ms since the epoch by the servers' clocks. */
  reset_at: number;
}

export interface RateLimitTables {
  rate_limits: RateLimitsTable;
}
