/** Zarr v3 `zarr.json` documents (zarr-specs v3.0 core): groups, and regular-grid arrays with default keys. */
import type { SampleType } from '../types.js';

export function groupMetadata(attributes: Record<string, unknown> = {}): Uint8Array {
  return json({ zarr_format: 3, node_type: 'group', attributes });
}

export interface ArrayMetadataInit {
  shape: number[];
  chunkShape: number[];
  dataType: SampleType;
  codecs: readonly object[];
  dimensionNames?: string[];
  attributes?: Record<string, unknown>;
}

export function arrayMetadata(init: ArrayMetadataInit): Uint8Array {
  return json({
    zarr_format: 3,
    node_type: 'array',
    shape: init.shape,
    data_type: init.dataType,
    chunk_grid: { name: 'regular', configuration: { chunk_shape: init.chunkShape } },
    chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
    fill_value: 0,
    codecs: init.codecs,
    attributes: init.attributes ?? {},
    ...(init.dimensionNames ? { dimension_names: init.dimensionNames } : {}),
  });
}

export function json(value: unknown): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
}

/** `<modality>_<rate>hz`, the rate's decimal point written as `p` (docs/conversion.md: eeg_12p8hz). */
export function groupName(modality: string, rate: number): string {
  const text = Number.isInteger(rate) ? String(rate) : rate.toFixed(6).replace(/0+$/, '').replace('.', 'p');
  return `${modality.toLowerCase()}_${text}hz`;
}

/** A power of two near 4 s of samples, at least 64, and no longer than the recording needs. */
export function chunkSamplesFor(rate: number, nSamples: number): number {
  const near = 2 ** Math.round(Math.log2(Math.max(1, 4 * rate)));
  const cap = 2 ** Math.ceil(Math.log2(Math.max(64, nSamples)));
  return Math.max(64, Math.min(near, cap, 1 << 20));
}
