/**
 * What every search query shares: the WHERE (visibility first, then the facet filters) and the facet
 * counts over the datasets it matches.
 */
import { sql, type RawBuilder } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';

export interface SearchFilters {
  /** Only datasets with this modality (eeg, emg, ieeg...). */
  modality?: string;
  /** Only datasets with at least this many subjects. */
  minSubjects?: number;
  /** Only datasets with a recording at this native rate, in Hz. */
  samplingRate?: number;
  /** Only datasets with a recording of this BIDS task. */
  task?: string;
  /** Only datasets with a converted recording of this subject (label without `sub-`). */
  subject?: string;
  /** Only datasets with a recording whose native rate is at least / at most this, in Hz. */
  rateMin?: number;
  rateMax?: number;
}

export interface SearchInput extends SearchFilters {
  q: string;
  mode: 'fulltext' | 'semantic';
  limit: number;
  offset: number;
}

export interface FacetCount {
  value: string;
  count: number;
}

export interface Facets {
  modality: FacetCount[];
  sampling_rate: FacetCount[];
  min_subjects: FacetCount[];
}

/** Subject-count thresholds reported as `min_subjects` facet values. */
const SUBJECT_STEPS = [1, 5, 10, 20, 50, 100];

/** The WHERE of every search query: visibility first, then the facet filters. */
export function searchConditions(viewer: User | undefined, filters: SearchFilters): RawBuilder<unknown>[] {
  // As `canSee` (dataset-access.ts): public, the viewer's own, or shared with them (`dataset_members`).
  const where: RawBuilder<unknown>[] = [
    viewer
      ? sql`(d.visibility = 'public' or d.owner_id = ${viewer.id} or exists (select 1 from dataset_members m where m.dataset_id = d.id and m.user_id = ${viewer.id}))`
      : sql`d.visibility = 'public'`,
  ];
  if (filters.modality) where.push(sql`${filters.modality.toLowerCase()} = any(d.modalities)`);
  if (filters.minSubjects !== undefined) where.push(sql`d.n_subjects >= ${filters.minSubjects}`);
  if (filters.samplingRate !== undefined) where.push(sql`${filters.samplingRate}::double precision = any(d.sampling_rates)`);
  if (filters.task) where.push(sql`${filters.task} = any(d.tasks)`);
  // The recording catalogue's fences (recordings/, which owns the table; decision 0023) know each
  // dataset's subjects: one index probe a dataset.
  if (filters.subject) where.push(sql`exists (select 1 from recording_facets f where f.kind = 'subject' and f.value = ${filters.subject} and f.dataset_id = d.id)`);
  if (filters.rateMin !== undefined || filters.rateMax !== undefined) {
    where.push(sql`exists (select 1 from unnest(d.sampling_rates) rate where rate >= ${filters.rateMin ?? 0}::double precision and rate <= ${filters.rateMax ?? Number.MAX_VALUE}::double precision)`);
  }
  return where;
}

export const and = (parts: RawBuilder<unknown>[]) => sql.join(parts, sql` and `);

/**
 * Facet counts and the total over the datasets matching `where` (alias `d`), in one pass over them: each
 * dataset's modalities, rates and subject count are unnested side by side and counted by grouping sets, one
 * for each; the subject thresholds are summed here from the counts by subject number.
 */
export async function facetCounts(deps: Pick<Deps, 'db'>, where: RawBuilder<unknown>[]): Promise<{ total: number; facets: Facets }> {
  // grouping(m, r, s): 3 for the modality set, 5 for the rate set, 6 for the subject-count set.
  const { rows } = await sql<{ g: number; m: string | null; r: string | null; s: number | null; n: string | number }>`
    select grouping(m, r, s) as g, m, r::text as r, s, count(*) as n
    from (select unnest(d.modalities) as m, unnest(d.sampling_rates) as r, unnest(array[coalesce(d.n_subjects, -1)]) as s from datasets d where ${and(where)}) x
    group by grouping sets ((m), (r), (s))`.execute(deps.db);
  const facets: Facets = { modality: [], sampling_rate: [], min_subjects: [] };
  let total = 0;
  const bySubjects: Array<{ s: number; n: number }> = [];
  for (const row of rows) {
    const n = Number(row.n);
    if (row.g === 3 && row.m !== null) facets.modality.push({ value: row.m, count: n });
    else if (row.g === 5 && row.r !== null) facets.sampling_rate.push({ value: row.r, count: n });
    else if (row.g === 6 && row.s !== null) {
      // Each dataset once (-1: no subject count); a null is the padding of a longer array beside it.
      total += n;
      bySubjects.push({ s: Number(row.s), n });
    }
  }
  for (const step of SUBJECT_STEPS) {
    const count = bySubjects.filter(({ s }) => s >= step).reduce((sum, { n }) => sum + n, 0);
    if (count > 0) facets.min_subjects.push({ value: String(step), count });
  }
  facets.modality.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
  facets.sampling_rate.sort((a, b) => Number(a.value) - Number(b.value));
  facets.min_subjects.sort((a, b) => Number(a.value) - Number(b.value));
  return { total, facets };
}
