/** BIDS file names: `key-value` entities joined by `_`, then `_<suffix>.<extension>` (BIDS spec, common principles). */

export interface BidsName {
  entities: Map<string, string>;
  suffix: string;
  /** With the dot, lower-case; `.tsv.gz`-style double extensions are not used by the files read here. */
  extension: string;
  /** The name without its extension. */
  stem: string;
}

export function parseBidsName(fileName: string): BidsName | undefined {
  const dot = fileName.indexOf('.');
  const stem = dot < 0 ? fileName : fileName.slice(0, dot);
  const extension = dot < 0 ? '' : fileName.slice(dot).toLowerCase();
  const parts = stem.split('_');
  const suffix = parts.pop();
  if (!suffix || suffix.includes('-')) return undefined;
  const entities = new Map<string, string>();
  for (const part of parts) {
    const dash = part.indexOf('-');
    if (dash <= 0 || dash === part.length - 1) return undefined;
    entities.set(part.slice(0, dash), part.slice(dash + 1));
  }
  return { entities, suffix, extension, stem };
}
