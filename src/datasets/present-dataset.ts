import type { Config } from '../core/config.js';
import type { Dataset } from './dataset-queries.js';
import { HOSTED_SOURCE } from './source-repo.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The JSON of a dataset (docs/datasets.md). */
export function presentDataset(d: Dataset, config: Pick<Config, 'publicUrl'>) {
  const gitUrl = `${config.publicUrl}/git/${d.id}.git`;
  // The dataset's own hosted repository is recorded by a marker; clients see its URL instead.
  const hostedRepo = d.source_repo === HOSTED_SOURCE;
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    owner: d.owner_username,
    visibility: d.visibility,
    sandbox: d.sandbox,
    source_repo: hostedRepo ? gitUrl : d.source_repo,
    git_url: gitUrl,
    hosted_repo: hostedRepo,
    external_ids: d.external_ids,
    license: d.license,
    authors: d.authors,
    keywords: d.keywords,
    modalities: d.modalities,
    tasks: d.tasks,
    n_subjects: d.n_subjects,
    // PostgreSQL bigint arrives as a string.
    size_bytes: Number(d.size_bytes),
    latest_version: d.latest_version,
    doi: d.doi,
    concept_doi: d.concept_doi,
    publication_status: d.publication_status,
    zarr_status: d.zarr_status,
    zarr_converted_at: iso(d.zarr_converted_at),
    zarr_store_count: d.zarr_store_count,
    zarr_failure_count: zarrFailureCount(d),
    zarr_index_etag: d.zarr_index_etag,
    zarr_source_commit: d.zarr_source_commit,
    zarr_error: d.zarr_error,
    created_at: iso(d.created_at)!,
    updated_at: iso(d.updated_at)!,
  };
}

/**
 * How many recordings the last conversion could not convert, from the facts it recorded
 * (`metadata.recording`); null before the first conversion, or for facts recorded before failures were counted.
 */
export function zarrFailureCount(d: Pick<Dataset, 'metadata' | 'zarr_status'>): number | null {
  const recording = (d.metadata as { recording?: { failure_count?: unknown } } | null)?.recording;
  return d.zarr_status !== null && typeof recording?.failure_count === 'number' ? recording.failure_count : null;
}

export type PresentedDataset = ReturnType<typeof presentDataset>;
