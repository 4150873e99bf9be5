/**
 * Every migration, in order. Listed by hand so that no build or packaging step can drop one.
 * Append-only: a shipped migration is never edited; a change is a new file with a later date.
 */
import type { Migration } from 'kysely';
import * as accounts from './2026-11-23-0001-accounts.js';
import * as datasets from './2026-11-23-0002-datasets.js';
import * as datasetVersions from './2026-11-23-0210-dataset-versions.js';
import * as conversionJobs from './2026-11-23-0301-conversion-jobs.js';
import * as datasetSearch from './2026-11-23-0400-dataset-search.js';
import * as publication from './2026-11-23-0401-publication.js';
import * as recordings from './2026-11-24-2200-recordings.js';
import * as rateLimits from './2026-11-27-1017-rate-limits.js';
import * as githubDeliveries from './2026-11-27-1400-github-deliveries.js';
import * as hostedSourceMarker from './2026-11-27-1537-hosted-source-marker.js';
import * as datasetZarrError from './2026-11-27-1538-dataset-zarr-error.js';
import * as copyExposures from './2026-11-27-1630-copy-exposures.js';
import * as datasetMembers from './2026-11-27-1700-dataset-members.js';
import * as annotations from './2026-11-27-1701-annotations.js';
import * as conversionTasks from './2026-11-27-1800-conversion-tasks.js';
import * as recordingFences from './2026-11-27-1800-recording-fences.js';
import * as repositoryHolders from './2026-11-27-1800-repository-holders.js';
import * as embeddingIndex from './2026-11-27-1801-embedding-index.js';
import * as schemaRequirements from './2026-11-27-2300-schema-requirements.js';
import * as catalogueTermsAndRanges from './2026-11-27-2319-catalogue-terms-and-ranges.js';
import * as catalogueSearchIndexes from './2026-11-27-2320-catalogue-search-indexes.js';
import * as storageGrants from './2026-11-29-0900-storage-grants.js';
import * as catalogueSyncs from './2026-11-29-1700-catalogue-syncs.js';
import * as sessionsByUser from './2026-11-29-1710-sessions-by-user.js';
import * as versionCase from './2026-11-29-1900-version-case.js';
import * as loginCodeChoices from './2026-11-29-2100-login-code-choices.js';

export const migrations: Record<string, Migration> = {
  '2026-11-23-0001-accounts': accounts,
  '2026-11-23-0002-datasets': datasets,
  '2026-11-23-0210-dataset-versions': datasetVersions,
  '2026-11-23-0301-conversion-jobs': conversionJobs,
  '2026-11-23-0400-dataset-search': datasetSearch,
  '2026-11-23-0401-publication': publication,
  '2026-11-24-2200-recordings': recordings,
  '2026-11-27-1017-rate-limits': rateLimits,
  '2026-11-27-1400-github-deliveries': githubDeliveries,
  '2026-11-27-1537-hosted-source-marker': hostedSourceMarker,
  '2026-11-27-1538-dataset-zarr-error': datasetZarrError,
  '2026-11-27-1630-copy-exposures': copyExposures,
  '2026-11-27-1700-dataset-members': datasetMembers,
  '2026-11-27-1701-annotations': annotations,
  '2026-11-27-1800-conversion-tasks': conversionTasks,
  '2026-11-27-1800-recording-fences': recordingFences,
  '2026-11-27-1800-repository-holders': repositoryHolders,
  '2026-11-27-1801-embedding-index': embeddingIndex,
  '2026-11-27-2300-schema-requirements': schemaRequirements,
  '2026-11-27-2319-catalogue-terms-and-ranges': catalogueTermsAndRanges,
  '2026-11-27-2320-catalogue-search-indexes': catalogueSearchIndexes,
  '2026-11-29-0900-storage-grants': storageGrants,
  '2026-11-29-1700-catalogue-syncs': catalogueSyncs,
  '2026-11-29-1710-sessions-by-user': sessionsByUser,
  '2026-11-29-1900-version-case': versionCase,
  '2026-11-29-2100-login-code-choices': loginCodeChoices,
};
