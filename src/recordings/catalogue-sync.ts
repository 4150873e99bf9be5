/**
 * Keeps the recording catalogue true to each dataset's Zarr copy: after a conversion publishes its index,
 * the rows of the stores it wrote are rebuilt from their metadata and rows of stores gone are dropped; a
 * catalogue not whole at the copy the conversion started from (its last sync failed) is rebuilt whole. At
 * startup, every copy whose catalogue is not whole at its commit is read again (`backfillCatalogue`).
 */
import type { Deps } from '../deps.js';
import { listZarrStates } from '../datasets/dataset-queries.js';
import type { StoreIndex } from '../formats/zarr/store-index.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import type { ChannelGroup } from '../client/index.js';
import { mapLimit } from '../core/map-limit.js';
import { catalogued, catalogueSyncs, countCatalogued, forgetCatalogueSync, replaceRecordings, type NewRecording } from './catalogue-queries.js';
import { recordingEntities } from './recording-entities.js';
import { readEventLabels } from './store-events.js';
import { readStoreMetadata } from './store-metadata.js';

type SyncDeps = Pick<Deps, 'db' | 'objects' | 'log' | 'clock'>;

/** Stores whose metadata and events are read at once when rows are rebuilt. */
const ROWS_READ_AT_ONCE = 8;

/** The catalogue row of one store, from its metadata and events; `undefined` when the store is missing. */
export async function catalogueRow(deps: Pick<Deps, 'objects'>, datasetId: string, store: { path: string; zarr: string }, sourceCommit: string | null): Promise<NewRecording | undefined> {
  const metadata = await readStoreMetadata(deps.objects, datasetId, store.zarr);
  if (!metadata) return undefined;
  const labels = await readEventLabels(deps.objects, metadata);
  const counts: Record<string, number> = {};
  for (const label of labels) counts[label] = (counts[label] ?? 0) + 1;
  const groups: ChannelGroup[] = metadata.groups.map((g) => ({
    name: g.name,
    modality: g.modality,
    rate: g.rate,
    n_channels: g.n_channels,
    n_samples: g.n_samples,
    duration_s: g.duration_s,
    channels: g.channels.map(({ label, type, unit, status }) => ({ label, type, unit, status })),
  }));
  const entities = recordingEntities(store.path);
  const channelLabels = [...new Set(groups.flatMap((g) => g.channels.map((c) => c.label)))];
  const channelTypes = [...new Set(groups.flatMap((g) => g.channels.map((c) => c.type.toUpperCase())))];
  const trialTypes = Object.keys(counts);
  return {
    zarr: store.zarr,
    path: store.path,
    source_commit: sourceCommit,
    ...entities,
    datatype: entities.datatype ?? groups[0]?.modality ?? null,
    duration_s: Math.max(0, ...groups.map((g) => g.duration_s)),
    n_channels: groups.reduce((sum, g) => sum + g.n_channels, 0),
    rates: [...new Set(groups.map((g) => g.rate))],
    channel_labels: channelLabels,
    channel_types: channelTypes,
    trial_types: trialTypes,
    groups: JSON.stringify(groups),
    events: JSON.stringify({ n_events: labels.length, counts }),
    search_text: [datasetId, store.path, entities.task, ...channelLabels, ...channelTypes, ...trialTypes].filter(Boolean).join(' '),
  };
}

/** What a conversion reports it changed: the stores it wrote over the copy of `from` (the dataset's commit before it). */
export interface ConvertedStores {
  from: string | null;
  converted: readonly string[];
}

/**
 * Brings the dataset's rows in line with `index`: when the catalogue was whole at the copy `changed` started
 * from, the stores it converted and stores without a row are read again; otherwise (no `changed`, or a sync
 * of an earlier copy failed) every store is. Rows of stores the index no longer names are dropped. Returns
 * the rows written.
 */
export async function syncCatalogue(deps: SyncDeps, datasetId: string, index: Pick<StoreIndex, 'stores' | 'source_commit'>, changed?: ConvertedStores): Promise<number> {
  // Forgotten until the new rows are written, so that a failure on the way leaves the catalogue to be read whole.
  const wholeAt = await forgetCatalogueSync(deps.db, datasetId);
  const redo = changed && changed.from !== null && changed.from === wholeAt ? new Set(changed.converted) : undefined;
  const have = await catalogued(deps.db, datasetId);
  const stale = index.stores.filter((store) => !redo || redo.has(store.zarr) || !have.has(store.zarr));
  // Read several stores at a time: one after the other, their small reads made this the longest step of a
  // conversion's publication, which runs after every recording is done, while the other workers idle.
  const read = await mapLimit(stale, ROWS_READ_AT_ONCE, (store) => catalogueRow(deps, datasetId, store, index.source_commit));
  const rows = read.filter((row): row is NewRecording => row !== undefined);
  const readAgain = new Set(stale.map((store) => store.zarr));
  const keep = index.stores.map((s) => s.zarr);
  await replaceRecordings(deps.db, datasetId, { rows, keep, unchanged: keep.filter((zarr) => !readAgain.has(zarr)), sourceCommit: index.source_commit }, deps.clock.now());
  return rows.length;
}

/**
 * Reads whole the catalogues not whole at their copy's commit: copies converted before the catalogue existed,
 * and those whose last sync failed (a store that could not be read at that moment). Each dataset on its own:
 * one damaged index is logged and the others are still read. It runs in the background at startup, so it
 * never rejects: a database too busy to list the copies is logged, and the next start tries again (a
 * rejection nobody awaits would end the process).
 */
export async function backfillCatalogue(deps: SyncDeps): Promise<number> {
  let states;
  let wholeAt;
  try {
    states = await listZarrStates(deps.db, 'all');
    wholeAt = await catalogueSyncs(deps.db);
  } catch (err) {
    deps.log.warn({ err }, 'recording catalogue backfill could not list the copies; the next start tries again');
    return 0;
  }
  let filled = 0;
  for (const state of states) {
    if (state.zarr_source_commit === null) continue;
    try {
      if (wholeAt.get(state.id) === state.zarr_source_commit && (await countCatalogued(deps.db, state.id)) > 0) continue;
      const index = await readStoreIndex(deps.objects, state.id);
      if (!index || index.stores.length === 0) continue;
      await syncCatalogue(deps, state.id, index);
      filled++;
    } catch (err) {
      deps.log.warn({ err, dataset: state.id }, 'recording catalogue backfill failed');
    }
  }
  if (filled > 0) deps.log.info({ datasets: filled }, 'recording catalogue backfilled');
  return filled;
}
