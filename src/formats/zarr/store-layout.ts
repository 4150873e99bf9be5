/** What a written store holds, as the index (docs/conversion.md `index.json` `stores[].groups`) describes it. */

export const storeFormat = 'nds-zarr';
export const storeFormatVersion = 1;
export const converterName = 'nds-converter';
export const converterVersion = '0.1.0';

export interface GroupSummary {
  name: string;
  modality: string;
  rate: number;
  n_channels: number;
  n_samples: number;
  duration_s: number;
  chunk_samples: number;
}

export interface StoreSummary {
  groups: GroupSummary[];
  modalities: string[];
  duration_s: number;
  n_events: number;
  /** Distinct event descriptions, in order of first appearance. */
  trial_types: string[];
  flags: string[];
}
