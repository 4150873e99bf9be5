/**
 * Every read and write of `dataset_members` rows (decision 0028): the one module that queries the table
 * (`test/architecture/table-owners.test.ts`); the search SQL reads it in its visibility condition. Each function
 * takes `db` first, so the caller decides what runs together.
 */
import { sql, type Kysely } from 'kysely';
import type { MemberRole } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';

/** A member as the API lists them. */
export interface MemberListing {
  user_id: number;
  username: string;
  role: MemberRole;
  added_by_username: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The role `userId` holds in `datasetId`; `undefined` when they are no member. */
export async function findMemberRole(db: Kysely<Database>, datasetId: string, userId: number): Promise<MemberRole | undefined> {
  return (await memberRoleOf(db, datasetId, userId).executeTakeFirst())?.role;
}

/**
 * The role `userId` holds in `datasetId` (`role`, no row when they are no member), as a subquery for the statement
 * that reads the dataset with it (`findDatasetWithRole`): keyed by the id asked, so it runs whether the dataset exists
 * or not.
 */
export function memberRoleOf(db: Kysely<Database>, datasetId: string, userId: number) {
  return db.selectFrom('dataset_members').select('dataset_members.role').where('dataset_members.dataset_id', '=', datasetId).where('dataset_members.user_id', '=', userId);
}

/**
 * The ids of the datasets `userId` is a member of, as a subquery for other tables' filters (`where id in
 * (...)`): how lists and the catalogue let a member see a private dataset.
 */
export function memberDatasetIds(db: Kysely<Database>, userId: number) {
  return db.selectFrom('dataset_members').select('dataset_members.dataset_id').where('dataset_members.user_id', '=', userId);
}

export function listMembers(db: Kysely<Database>, datasetId: string): Promise<MemberListing[]> {
  return db
    .selectFrom('dataset_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .leftJoin('users as a', 'a.id', 'm.added_by')
    .select(['m.user_id', 'u.username', 'm.role', 'a.username as added_by_username', 'm.created_at', 'm.updated_at'])
    .where('m.dataset_id', '=', datasetId)
    .orderBy('u.username')
    .execute();
}

/** Adds the member or changes their role; `created` says which. One statement, so two adds cannot both insert. */
export async function upsertMember(db: Kysely<Database>, member: { datasetId: string; userId: number; role: MemberRole; addedBy: number }, now: Date): Promise<{ created: boolean }> {
  const row = await db
    .insertInto('dataset_members')
    .values({ dataset_id: member.datasetId, user_id: member.userId, role: member.role, added_by: member.addedBy, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['dataset_id', 'user_id']).doUpdateSet({ role: member.role, added_by: member.addedBy, updated_at: now }))
    // PostgreSQL: a row this statement inserted has no deleting transaction yet (`xmax` 0); an updated one has.
    .returning(sql<boolean>`(xmax = 0)`.as('created'))
    .executeTakeFirstOrThrow();
  return { created: row.created };
}

/** Removes the member; false when they were none. */
export async function deleteMember(db: Kysely<Database>, datasetId: string, userId: number): Promise<boolean> {
  return (await db.deleteFrom('dataset_members').where('dataset_id', '=', datasetId).where('user_id', '=', userId).returning('user_id').executeTakeFirst()) !== undefined;
}
