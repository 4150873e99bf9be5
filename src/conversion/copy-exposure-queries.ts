/**
 * The `copy_exposures` table (its one owner): sweeps wanted of a Zarr copy's public-read tags, and the lease
 * that lets one process at a time sweep a copy or write its `index.json` (decision 0016).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { isForeignKeyViolation } from '../db/sql-errors.js';

export interface SweepWant {
  /** The want to finish; a later want moves it on. */
  wantSeq: number;
  doneSeq: number;
  /** Paths under `<id>/zarr/` (a trailing `/` for a folder); null for the whole copy. */
  scope: string[] | null;
}

/**
 * Wants a sweep of `scope` (null: the whole copy), merged into a want not done yet (a whole copy absorbs
 * any scope). False when the dataset no longer exists.
 */
export async function wantSweep(db: Kysely<Database>, datasetId: string, scope: string[] | null): Promise<boolean> {
  try {
    await sql`
      insert into copy_exposures (dataset_id, want_seq, scope) values (${datasetId}, 1, ${scope}::text[])
      on conflict (dataset_id) do update set
        scope = case
          when copy_exposures.want_seq = copy_exposures.done_seq then excluded.scope
          when copy_exposures.scope is null or excluded.scope is null then null
          else array(select distinct unnest(copy_exposures.scope || excluded.scope) order by 1)
        end,
        want_seq = copy_exposures.want_seq + 1`.execute(db);
    return true;
  } catch (err) {
    if (isForeignKeyViolation(err)) return false;
    throw err;
  }
}

/** The copy's want; undefined when none was ever recorded (or the dataset is gone). */
export async function findSweepWant(db: Kysely<Database>, datasetId: string): Promise<SweepWant | undefined> {
  const row = await db.selectFrom('copy_exposures').select(['want_seq', 'done_seq', 'scope']).where('dataset_id', '=', datasetId).executeTakeFirst();
  return row && { wantSeq: row.want_seq, doneSeq: row.done_seq, scope: row.scope };
}

/** Marks want `wantSeq` done, unless a later want came meanwhile (then false: sweep again). */
export async function finishSweepWant(db: Kysely<Database>, datasetId: string, wantSeq: number): Promise<boolean> {
  const r = await db
    .updateTable('copy_exposures')
    .set({ done_seq: wantSeq, scope: null })
    .where('dataset_id', '=', datasetId)
    .where('want_seq', '=', wantSeq)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Takes (or renews) the copy's lease for `holder` until `until`, if it is free, expired at `now`, or already
 * `holder`'s. Undefined when the dataset no longer exists.
 */
export async function takeCopyLease(db: Kysely<Database>, datasetId: string, holder: string, now: Date, until: Date): Promise<boolean | undefined> {
  try {
    await db.insertInto('copy_exposures').values({ dataset_id: datasetId }).onConflict((oc) => oc.column('dataset_id').doNothing()).execute();
  } catch (err) {
    if (isForeignKeyViolation(err)) return undefined;
    throw err;
  }
  const r = await db
    .updateTable('copy_exposures')
    .set({ lease_until: until, lease_holder: holder })
    .where('dataset_id', '=', datasetId)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now), eb('lease_holder', '=', holder)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives the lease back, if `holder` still has it. */
export async function releaseCopyLease(db: Kysely<Database>, datasetId: string, holder: string): Promise<void> {
  await db.updateTable('copy_exposures').set({ lease_until: null, lease_holder: null }).where('dataset_id', '=', datasetId).where('lease_holder', '=', holder).execute();
}

/** Copies with a want not done and no live lease at `now`: a sweep that crashed or could not run. */
export async function listDueSweeps(db: Kysely<Database>, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('copy_exposures')
    .select('dataset_id')
    .where(sql<boolean>`want_seq > done_seq`)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .orderBy('dataset_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.dataset_id);
}
