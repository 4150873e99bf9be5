/**
 * The catalogue tools: `search_datasets`, `get_dataset`, `list_recordings` and `get_events`. Each reads its
 * arguments (already checked against its schema by the SDK), calls the service the HTTP route calls, with the
 * same caller, and shapes a compact answer for an agent. The three that walk the catalogue or the search spend
 * the anonymous catalogue budget first, as their HTTP routes do (`catalogue-budget.ts`).
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
import { readConversionFailures } from '../formats/zarr/conversion-failures.js';
import { listRecordings } from '../recordings/catalogue.js';
import { countCatalogued } from '../recordings/catalogue-queries.js';
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
  /**
   * Spends one request of the anonymous catalogue budget (`catalogue-budget.ts`): nothing for a signed-in
   * caller; throws `rate_limited` past it. Called before any work, so a refusal reads the same for every id.
   */
  spendCatalogueCall: () => Promise<void>;
}

/**
 * How many recordings, and failures, `get_dataset` lists: its answer goes whole into an agent's context (and
 * twice over the wire, as structured content and as text), where 50 recordings of one channel group are about
 * 13 kB of JSON, some 4,000 tokens; `list_recordings` with `dataset` and the answer's `next_cursor` pages through
 * the rest.
 */
export const DATASET_LISTED = 50;

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

export async function searchDatasetsTool({ deps, user, spendCatalogueCall }: ToolContext, args: SearchArgs) {
  await spendCatalogueCall();
  const outcome = await searchDatasets(deps, user, { q: args.q ?? '', mode: 'fulltext', modality: args.modality, task: args.task, limit: args.limit, offset: 0 });
  return { total: outcome.total, datasets: outcome.hits.map(({ dataset }) => datasetLine(dataset, deps.config)) };
}

/**
 * A dataset, its versions, and the first `DATASET_LISTED` of its recordings and failures: `count` and
 * `failure_count` say how many there are, `next_cursor` continues the list with `list_recordings`. `subjects`
 * and `hours` are the dataset's, as `search_datasets` gives them (of its last conversion).
 */
export async function getDatasetTool({ deps, user, spendCatalogueCall }: ToolContext, args: GetDatasetArgs) {
  await spendCatalogueCall();
  const dataset = await visibleDataset(deps.db, args.dataset_id, user);
  const [versions, page, failures] = await Promise.all([
    listVersions(deps.db, dataset.id),
    listRecordings(deps, user, { dataset: dataset.id }, { limit: DATASET_LISTED }),
    readConversionFailures(deps, dataset.id),
  ]);
  const { subjects, hours } = datasetLine(dataset, deps.config);
  return {
    dataset: presentDataset(dataset, deps.config),
    versions: versions.map(presentVersion),
    recordings: {
      count: page.next_cursor === null ? page.recordings.length : await countCatalogued(deps.db, dataset.id),
      subjects,
      hours,
      items: page.recordings.map((r) => ({
        path: r.path,
        entities: r.entities,
        groups: r.groups.map((g) => ({ name: g.name, modality: g.modality, rate: g.rate, n_channels: g.n_channels, duration_s: g.duration_s })),
        n_events: r.events.n_events,
      })),
      next_cursor: page.next_cursor,
    },
    failures: (failures ?? []).slice(0, DATASET_LISTED),
    failure_count: failures?.length ?? 0,
  };
}

export async function listRecordingsTool({ deps, user, spendCatalogueCall }: ToolContext, args: ListRecordingsArgs) {
  await spendCatalogueCall();
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
