/**
 * Which level of the store to draw and which of its chunks to fetch, for a window of time on a plot of
 * a given pixel width. Pure functions: the viewer and its tests share them.
 */

export interface LevelChoiceInput {
  /** Level-0 samples in the visible window. */
  windowSamples: number;
  /** Width of the plot in device pixels. */
  pixelWidth: number;
  /** Number of view levels the group has (levels 1..n). */
  viewLevels: number;
  /** Downsampling factor between consecutive levels (docs/conversion.md: 4). */
  downsample: number;
  /**
   * Keep level 0 up to this many samples a pixel (montages and filters need the samples; the default rule
   * leaves level 0 at about 4).
   */
  level0SamplesPerPixel?: number;
}

/**
 * Level 0 while the window holds at most about two samples a pixel; otherwise the coarsest view level
 * that still has at least one column a pixel, so a min/max envelope never loses a peak to resampling.
 */
export function chooseLevel(input: LevelChoiceInput): number {
  const { windowSamples, pixelWidth, viewLevels, downsample } = input;
  if (pixelWidth <= 0 || windowSamples <= 2 * pixelWidth) return 0;
  if (input.level0SamplesPerPixel !== undefined && windowSamples <= input.level0SamplesPerPixel * pixelWidth) return 0;
  let level = 0;
  while (level < viewLevels && windowSamples / downsample ** (level + 1) >= pixelWidth) level++;
  return level;
}

export interface ChunkSpanInput {
  /** First level-0 sample of the window (may be fractional or outside the recording). */
  start: number;
  /** End of the window, exclusive, in level-0 samples. */
  end: number;
  level: number;
  downsample: number;
  /** Columns (samples) along time in one chunk at this level. */
  chunkColumns: number;
  /** Columns the level holds in total. */
  levelColumns: number;
}

export interface ChunkSpan {
  /** First and last chunk index (inclusive) covering the window; last < first when nothing is covered. */
  first: number;
  last: number;
}

/** The time-chunks of a level that hold any column of the window. */
export function chunksCovering(input: ChunkSpanInput): ChunkSpan {
  const factor = input.downsample ** input.level;
  const nChunks = Math.ceil(input.levelColumns / input.chunkColumns);
  const firstColumn = Math.max(0, Math.floor(input.start / factor));
  const lastColumn = Math.min(input.levelColumns - 1, Math.ceil(input.end / factor) - 1);
  if (lastColumn < firstColumn || nChunks === 0) return { first: 0, last: -1 };
  return {
    first: Math.min(nChunks - 1, Math.floor(firstColumn / input.chunkColumns)),
    last: Math.min(nChunks - 1, Math.floor(lastColumn / input.chunkColumns)),
  };
}

/** The covering span widened by `margin` chunks each side (the prefetch), clipped to the level. */
export function withPrefetch(span: ChunkSpan, margin: number, nChunks: number): ChunkSpan {
  if (span.last < span.first) return span;
  return { first: Math.max(0, span.first - margin), last: Math.min(nChunks - 1, span.last + margin) };
}

/** Columns of level `level` for a group of `nSamples` level-0 samples: ceil(n / 4^L). */
export function levelColumns(nSamples: number, level: number, downsample: number): number {
  return level === 0 ? nSamples : Math.ceil(nSamples / downsample ** level);
}
