/**
 * Every read and write of `annotations`, `annotation_revisions` and `annotation_changes` (decision 0028): the
 * one module that queries them (`test/architecture/table-owners.test.ts`). Each function takes `db` first; the
 * writes of one change run in one transaction the caller opens, which starts with `claimRevision`.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { AnnotationChangesTable, AnnotationRow, AnnotationSnapshot, AnnotationsTable } from '../db/annotations-tables.js';
import type { Database } from '../db/types.js';

/** An annotation with its author's username (null once the account is gone). */
export type AnnotationListing = AnnotationRow & { author: string | null };

/** A kept change with its author's username. */
export interface ChangeListing {
  revision: number;
  annotation_id: string;
  action: 'create' | 'update' | 'delete';
  before: AnnotationSnapshot | null;
  after: AnnotationSnapshot | null;
  author: string | null;
  changed_at: Date;
}

/** The current annotations of one recording, by onset (then id, so the order never depends on the planner). */
export function listAnnotationRows(db: Kysely<Database>, datasetId: string, path: string): Promise<AnnotationListing[]> {
  return db
    .selectFrom('annotations as a')
    .leftJoin('users as u', 'u.id', 'a.author_id')
    .selectAll('a')
    .select('u.username as author')
    .where('a.dataset_id', '=', datasetId)
    .where('a.path', '=', path)
    .orderBy('a.onset')
    .orderBy('a.id')
    .execute();
}

/** How many annotations one recording holds now. */
export async function countAnnotationRows(db: Kysely<Database>, datasetId: string, path: string): Promise<number> {
  const row = await db.selectFrom('annotations').select(sql<number>`count(*)::int`.as('n')).where('dataset_id', '=', datasetId).where('path', '=', path).executeTakeFirstOrThrow();
  return row.n;
}

export function findAnnotationRow(db: Kysely<Database>, datasetId: string, id: string): Promise<AnnotationListing | undefined> {
  return db.selectFrom('annotations as a').leftJoin('users as u', 'u.id', 'a.author_id').selectAll('a').select('u.username as author').where('a.dataset_id', '=', datasetId).where('a.id', '=', id).executeTakeFirst();
}

/** The recording's revision: 0 before its first change. */
export async function recordingRevision(db: Kysely<Database>, datasetId: string, path: string): Promise<number> {
  return (await db.selectFrom('annotation_revisions').select('revision').where('dataset_id', '=', datasetId).where('path', '=', path).executeTakeFirst())?.revision ?? 0;
}

/**
 * Moves the recording's revision on by one and returns the new one; with `expected`, only from that revision,
 * and `undefined` when it is another (the change is refused). One statement each: concurrent claims of one
 * revision queue on its row, and only the first finds it unchanged (PostgreSQL re-checks the condition of an
 * UPDATE waiting on a row lock; a second INSERT of revision 1 finds the first's row).
 */
export async function claimRevision(trx: Kysely<Database>, datasetId: string, path: string, expected: number | undefined): Promise<number | undefined> {
  if (expected === undefined) {
    const row = await trx
      .insertInto('annotation_revisions')
      .values({ dataset_id: datasetId, path, revision: 1 })
      .onConflict((oc) => oc.columns(['dataset_id', 'path']).doUpdateSet({ revision: sql<number>`annotation_revisions.revision + 1` }))
      .returning('revision')
      .executeTakeFirstOrThrow();
    return row.revision;
  }
  if (expected === 0) {
    const row = await trx.insertInto('annotation_revisions').values({ dataset_id: datasetId, path, revision: 1 }).onConflict((oc) => oc.doNothing()).returning('revision').executeTakeFirst();
    return row?.revision;
  }
  const row = await trx
    .updateTable('annotation_revisions')
    .set({ revision: sql<number>`revision + 1` })
    .where('dataset_id', '=', datasetId)
    .where('path', '=', path)
    .where('revision', '=', expected)
    .returning('revision')
    .executeTakeFirst();
  return row?.revision;
}

/** Rows a batch: PostgreSQL takes at most 65,535 parameters a statement. */
const BATCH = 1000;

export async function insertAnnotationRows(trx: Kysely<Database>, rows: Insertable<AnnotationsTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await trx.insertInto('annotations').values(rows.slice(i, i + BATCH)).execute();
}

export async function updateAnnotationRow(trx: Kysely<Database>, id: string, changes: Partial<Omit<AnnotationRow, 'id' | 'dataset_id' | 'path' | 'author_id' | 'created_at'>>): Promise<void> {
  await trx.updateTable('annotations').set(changes).where('id', '=', id).execute();
}

export async function deleteAnnotationRow(trx: Kysely<Database>, id: string): Promise<void> {
  await trx.deleteFrom('annotations').where('id', '=', id).execute();
}

export async function insertChangeRows(trx: Kysely<Database>, rows: Insertable<AnnotationChangesTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await trx.insertInto('annotation_changes').values(rows.slice(i, i + BATCH)).execute();
}

/** The recording's kept changes, oldest first, after revision `after` (0: all), at most `limit`. */
export function listChangeRows(db: Kysely<Database>, datasetId: string, path: string, after: number, limit: number): Promise<ChangeListing[]> {
  return db
    .selectFrom('annotation_changes as c')
    .leftJoin('users as u', 'u.id', 'c.author_id')
    .select(['c.revision', 'c.annotation_id', 'c.action', 'c.before', 'c.after', 'u.username as author', 'c.changed_at'])
    .where('c.dataset_id', '=', datasetId)
    .where('c.path', '=', path)
    .where('c.revision', '>', after)
    .orderBy('c.id')
    .limit(limit)
    .execute() as Promise<ChangeListing[]>;
}

/** The recordings of a dataset that have annotations, by path. */
export async function annotatedPaths(db: Kysely<Database>, datasetId: string): Promise<string[]> {
  const rows = await db.selectFrom('annotations').select('path').distinct().where('dataset_id', '=', datasetId).orderBy('path').execute();
  return rows.map((r) => r.path);
}

/** A label used in a dataset's annotations: how many annotations carry it, on how many recordings. */
export interface LabelUse {
  label: string;
  count: number;
  recordings: number;
}

/** The labels of a dataset's annotations across its recordings, most used first (then by label), at most `limit`. */
export function annotationLabelUses(db: Kysely<Database>, datasetId: string, limit: number): Promise<LabelUse[]> {
  return db
    .selectFrom('annotations')
    .select(['label', sql<number>`count(*)::int`.as('count'), sql<number>`count(distinct path)::int`.as('recordings')])
    .where('dataset_id', '=', datasetId)
    .groupBy('label')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('label')
    .limit(limit)
    .execute();
}
