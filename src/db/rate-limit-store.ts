/**
 * Rate-limit windows in the database (`rate_limits`, this file its one owner): what every process of a
 * service counts against when no Redis is set for limits, on PostgreSQL and on the embedded PGlite alike.
 * Each count is one statement (an upsert that opens, renews or adds to the window under the row's lock), so
 * processes racing on one key never lose a point. Times come from the caller's clock, never from the
 * database's, so tests move windows along by moving their clock.
 */
import { sql, type Kysely } from 'kysely';
import type { LimitStore, LimitWindow } from '../core/rate-limiter.js';
import type { Database } from './types.js';

/** How often, at most, windows that ended are deleted (by the clock of the counts). */
const SWEEP_EVERY_MS = 5 * 60_000;

export class DatabaseLimitStore implements LimitStore {
  readonly #db: Kysely<Database>;
  #nextSweep = 0;
  #sweeping: Promise<void> | undefined;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async add(key: string, points: number, durationMs: number, now: number): Promise<LimitWindow> {
    const row = await this.#db
      .insertInto('rate_limits')
      .values({ key, points, reset_at: now + durationMs })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          points: sql<number>`case when rate_limits.reset_at <= ${now} then excluded.points else rate_limits.points + excluded.points end`,
          reset_at: sql<number>`case when rate_limits.reset_at <= ${now} then excluded.reset_at else rate_limits.reset_at end`,
        }),
      )
      .returning(['points', 'reset_at'])
      .executeTakeFirstOrThrow();
    this.#sweepNowAndThen(now);
    return { points: Number(row.points), resetAt: Number(row.reset_at) };
  }

  async takeBack(key: string, points: number, window: LimitWindow): Promise<void> {
    const row = await this.#db
      .updateTable('rate_limits')
      .set({ points: sql<number>`points - ${points}` })
      .where('key', '=', key)
      .where('reset_at', '=', window.resetAt)
      .returning('points')
      .executeTakeFirst();
    // A window back at zero goes, so the next count opens a window of its own (as if this one never was);
    // a count that came in meanwhile keeps it.
    if (row && Number(row.points) <= 0) {
      await this.#db.deleteFrom('rate_limits').where('key', '=', key).where('reset_at', '=', window.resetAt).where('points', '<=', 0).execute();
    }
  }

  async close(): Promise<void> {
    await this.#sweeping;
  }

  /** Deletes windows that ended, at most once every five minutes, beside the count that noticed it was time. */
  #sweepNowAndThen(now: number): void {
    if (now < this.#nextSweep || this.#sweeping) return;
    this.#nextSweep = now + SWEEP_EVERY_MS;
    this.#sweeping = this.#db
      .deleteFrom('rate_limits')
      .where('reset_at', '<=', now)
      .execute()
      .then(
        () => undefined,
        // Left for the next sweep: a failing database is the fallback's to notice, on the next count.
        () => undefined,
      )
      .finally(() => (this.#sweeping = undefined));
  }
}
