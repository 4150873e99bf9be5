/**
 * The catalogue tools: `search_datasets`, `get_dataset`, `list_recordings` and `get_events`. Each reads its
 * arguments (already checked against its schema by the SDK), calls the service the HTTP route calls, with the
 * same caller, and shapes a compact answer for an agent.
 */
import type { SignIn } from '../accounts/sign-in-of-credential.js';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';
import type { ServerDeps } from '../http/app-env.js';
import { visibleDataset } from '../datasets/dataset-access.js';
import type { Dataset } from '../datasets/dataset-queries.js';
import { presentDataset } from '../datasets/present-dataset.js';
import { searchDatasets } from '../datasets/search.js';
import { listVersions, presentVersion } from '../datasets/versions.js';
import { datasetRecordings, listRecordings } from '../recordings/catalogue.js';
import { recordingEvents } from '../recordings/recording-events.js';
import type { BlobAttachments } from './blob-attachments.js';
import type { EventsArgs, GetDatasetArgs, ListRecordingsArgs, SearchArgs } from './tool-schemas.js';

/**
 * What every tool receives: the services, who calls (undefined: anonymous, public data only), and where a tool
 * may leave large bytes to be written into the answer as it is sent (`blob-attachments.ts`; absent: inline).
 */
export interface ToolContext {
  deps: ServerDeps;
  user: User | undefined;
  /** The API key the caller signed in with (`accounts/sign-in-of-credential.ts`): a link's grant ends with it. */
  signIn?: SignIn;
  attachments?: BlobAttachments | undefined;
}

/** The `metadata.recording` facts of a dataset's last conversion (`datasets/search-fields.ts`). */
function facts(d: Dataset): { n_recordings?: number; duration_s?: number } {
  return ((d.metadata as { recording?: { n_recordings?: number; duration_s?: number } } | null)?.recording ?? {});
}

/** One dataset in a line of a list: what an agent needs to pick one. */
function datasetLine(d: Dataset, config: Deps['config']) {
  const f = facts(d);
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    modalities: d.modalities,
    tasks: d.tasks,
    subjects: d.n_subjects,
    recordings: d.zarr_store_count ?? f.n_recordings ?? null,
    hours: typeof f.duration_s === 'number' ? Number((f.duration_s / 3600).toFixed(4)) : null,
    doi: d.doi,
    url: `${config.publicUrl}/datasets/${d.id}`,
  };
}

export async function searchDatasetsTool({ deps, user }: ToolContext, args: SearchArgs) {
  const outcome = await searchDatasets(deps, user, { q: args.q ?? '', mode: 'fulltext', modality: args.modality, task: args.task, limit: args.limit, offset: 0 });
  return { total: outcome.total, datasets: outcome.hits.map(({ dataset }) => datasetLine(dataset, deps.config)) };
}

export async function getDatasetTool({ deps, user }: ToolContext, args: GetDatasetArgs) {
  const dataset = await visibleDataset(deps.db, args.dataset_id, user);
  const [versions, { recordings, failures }] = await Promise.all([listVersions(deps.db, dataset.id), datasetRecordings(deps, user, dataset.id)]);
  const subjects = new Set(recordings.map((r) => r.entities.subject).filter((s): s is string => s !== null));
  const seconds = recordings.reduce((sum, r) => sum + Math.max(0, ...r.groups.map((g) => g.duration_s)), 0);
  return {
    dataset: presentDataset(dataset, deps.config),
    versions: versions.map(presentVersion),
    recordings: {
      count: recordings.length,
      subjects: subjects.size,
      hours: Number((seconds / 3600).toFixed(4)),
      items: recordings.map((r) => ({
        path: r.path,
        entities: r.entities,
        groups: r.groups.map((g) => ({ name: g.name, modality: g.modality, rate: g.rate, n_channels: g.n_channels, duration_s: g.duration_s })),
        n_events: r.events.n_events,
      })),
    },
    failures,
  };
}

export async function listRecordingsTool({ deps, user }: ToolContext, args: ListRecordingsArgs) {
  const { limit, cursor, ...filters } = args;
  return listRecordings(deps, user, filters, { limit, ...(cursor ? { cursor } : {}) });
}

export async function getEventsTool({ deps, user }: ToolContext, args: EventsArgs) {
  const { group, events } = await recordingEvents(deps, user, args.dataset_id, args.path, args.group);
  const chosen = events.filter(
    (e) =>
      (args.trial_type === undefined || e.trial_type === args.trial_type) &&
      (args.start_s === undefined || e.onset + e.duration >= args.start_s) &&
      (args.end_s === undefined || e.onset < args.end_s),
  );
  const shown = chosen.slice(0, args.limit);
  return {
    dataset_id: args.dataset_id,
    path: args.path,
    group,
    total: chosen.length,
    truncated: shown.length < chosen.length,
    events: shown.map((e) => ({ onset: e.onset, duration: e.duration, sample: e.sample, trial_type: e.trial_type, value: e.value })),
  };
}
