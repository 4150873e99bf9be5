/** What the viewer exposes of its last frame on `window.ndsViewer` (for people debugging and for the tests). */
import type { EventPlacement } from '../../signals/event-marks.js';
import type { ChunkSpan } from './level-choice.js';
import type { DrawnAnnotation } from './annotation-marks.js';

/** One drawn row of the last frame, with the values drawn. */
export interface FrameRow {
  label: string;
  type: string;
  unit: string;
  bad: boolean;
  colour: string;
  /** µV (or own unit) per division, or 'auto'. */
  scale: number | 'auto';
  /** The value at the row's middle and the pixels one unit spans. */
  baseline: number;
  pixelsPerUnit: number;
  /**
   * Level 0: one value per sample, from sample `valuesStart` (after montage and filters). View levels:
   * min/max pairs [min0, max0, min1, max1, …] of the level's columns from column `valuesStart`.
   */
  values: Float64Array;
}

export interface ViewerState {
  /** Every chunk on screen is drawn, and the event markers are loaded. */
  ready: boolean;
  /** Every chunk on screen is drawn (the markers may still be loading). */
  tracesReady: boolean;
  recording: string;
  group: string;
  rate: number;
  nSamples: number;
  level: number;
  /** Window in level-0 samples: [start, end). */
  start: number;
  end: number;
  /** First row of the page, rows on it, rows in all. */
  channelFirst: number;
  channelCount: number;
  totalRows: number;
  gain: number;
  plot: { left: number; top: number; width: number; height: number; rowHeight: number };
  /** The canvas in device pixels. */
  canvas: { width: number; height: number };
  /** The time labels drawn under the plot, with the pixel columns each covers. */
  axis: Array<{ text: string; left: number; right: number }>;
  /** Physical [min, max] of each row on screen. */
  ranges: Array<[number, number]>;
  rows: FrameRow[];
  valuesStart: number;
  /** Montage and filters were applied (level 0); at view levels they are not, and `note` says so. */
  processed: boolean;
  note: string;
  reference: string;
  filter: { hp?: number | undefined; lp?: number | undefined; notch?: number | undefined };
  events: EventPlacement;
  /** The recorded channel of each row on the page (a montage row's first channel): what annotations name. */
  rowChannels: string[];
  /** The annotations drawn as spans, with their pixel columns and rows (none in `density` mode but a draft). */
  annotationsDrawn: DrawnAnnotation[];
  /** `spans`: each annotation in the window drawn; `density`: more than `maxSpans`, drawn as covered columns. */
  annotationMode: 'spans' | 'density';
  /** Annotations with a part in the window, and of the recording. */
  annotationsInView: number;
  annotationsTotal: number;
  /** The recording's annotations have been read (they load beside the traces). */
  annotationsLoaded: boolean;
  /** Chunks of the current level covering the window (time-chunk indices) and with the prefetch. */
  visibleChunks: ChunkSpan;
  prefetchChunks: ChunkSpan;
  renders: number;
  /** Milliseconds the last frame took to compute and draw (main thread). */
  frameMs: number;
  /** Of which reading, re-referencing and filtering samples not already computed (0 when reused)… */
  computeMs: number;
  /** …and painting the canvas. */
  drawMs: number;
  /** The plot's pixels were painted ahead, while idle after the previous pan, for exactly this frame. */
  plotPrepared: boolean;
}
