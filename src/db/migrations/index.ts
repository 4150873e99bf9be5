/**
 * Every migration, in order. Listed by hand so that no build or packaging step can drop one.
 * Append-only: a shipped migration is never edited; a change is a new file with a later date.
 */
import type { Migration } from 'kysely';
import * as accounts from './2026-11-23-0001-accounts.js';
import * as datasets from './2026-11-23-0002-datasets.js';
import * as conversionJobs from './2026-11-23-0301-conversion-jobs.js';

export const migrations: Record<string, Migration> = {
  '2026-11-23-0001-accounts': accounts,
  '2026-11-23-0002-datasets': datasets,
  '2026-11-23-0301-conversion-jobs': conversionJobs,
};
