/**
 * A window of a recording drawn as the signal viewer draws it (docs/viewer.md), without a browser: the same
 * layout, scales per channel type, montage, zero-phase filters, min/max columns, grid, events and scale bar
 * (`signals/`), the plot's pixels painted by the viewer's own painter (`signals/plot-pixels.ts`), the text in a
 * bitmap font, written as a PNG. One difference: the viewer draws long spans from the store's view levels
 * without filters; this draws every span from the exact samples, filtered.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { drawText, fillRect, fitText, GLYPH_HEIGHT, textWidth, type Image } from '../formats/raster/bitmap-font.js';
import { encodePng } from '../formats/raster/png-writer.js';
import { badColour, formatScale, microvoltFactor, parseScales, pixelsPerUnit, scaleOf, typeColour, unitSymbol } from '../signals/channel-scale.js';
import { envelopeRange, sampleEnvelope } from '../signals/column-envelope.js';
import { eventColours, placeEvents, type EventMarker, type EventPlacement } from '../signals/event-marks.js';
import { filterActive, filterMarginSamples, filterSections, filterWork, filtfiltSteps, NOTCH_TOP_HZ, type DisplayFilter } from '../signals/iir-filter.js';
import { applyMontage, derivations, parseReference, sourcesOf, type SourceChannel } from '../signals/montage.js';
import { paintPlotPixels, pixel, plotBufferRows, type DrawnRow, type FrameInput } from '../signals/plot-pixels.js';
import { formatTime } from '../signals/time-format.js';
import { autoRowScale, placeEventLabels, tickStep, traceLayout, type RowScale, type TraceLayout } from '../signals/trace-layout.js';
import { defaultSettings, rowsPerPageChoices, writeViewQuery } from '../signals/view-settings.js';
import type { WindowRequest } from '../client/index.js';
import type { RecordingReadDeps } from './recording-caches.js';
import { planWindow, windowRows } from './signal-window.js';
import { readEventLabels, readStoreEvents } from './store-events.js';

/** The longest span drawn, seconds. */
export const MAX_PLOT_SECONDS = 60;
/** The most rows drawn: the viewer's largest page. */
export const MAX_PLOT_ROWS = Math.max(...rowsPerPageChoices);
/**
 * Most filter work one plot may take, in section-samples (rows × samples read with the filters' margins and
 * padding × filter sections × 2 passes): about a second of one core, as the resampler's `MAX_RESAMPLE_WORK`.
 * The value bound alone allows 16 Mi values × 12 sections × 2 passes and more with the padding, several seconds
 * for one anonymous request. Ordinary plots stay below it: 64 EEG channels, 60 s at 256 Hz with HP 1 Hz, LP 40 Hz
 * and the 50 Hz notch take 9.4 × 10^6; 64 iEEG channels at 1000 Hz with HP 0.5 Hz, LP 200 Hz and the notch
 * 1.2 × 10^8 (with HP 0.1 Hz, 30 s read and padded each side: 1.8 × 10^8 for 10 s, refused for 60 s).
 */
export const MAX_FILTER_WORK = 250_000_000;
/** Section-samples filtered between two turns of the event loop (a few milliseconds). */
const FILTER_SLICE_WORK = 1_000_000;

export interface PlotRequest {
  /** The recording, window and channels, as for `GET /datasets/:id/signal` (drawn at the recording's own rate). */
  window: Omit<WindowRequest, 'rate'>;
  filter: DisplayFilter;
  /** `avg`, a label, `A1+A2`, `bipolar:Fp1-F7,…`; absent: the recording's own reference. */
  ref?: string | undefined;
  /** `eeg:50,eog:100` (µV per division) or `auto`; absent: the viewer's defaults. */
  scale?: string | undefined;
  width: number;
  height: number;
}

export interface Plot {
  png: Uint8Array;
  group: string;
  /** Store folder of the recording (the viewer's `recording` parameter). */
  zarr: string;
  startSeconds: number;
  spanSeconds: number;
  /** Labels of the rows drawn, top to bottom. */
  rows: string[];
  layout: TraceLayout;
  /** How each row maps values to pixels, and its µV (or unit) per division or 'auto'. */
  scales: Array<{ label: string; scale: number | 'auto'; baseline: number; pixelsPerUnit: number }>;
  /** The viewer's address parameters that open the same view (after `recording` and `group`). */
  viewQuery: URLSearchParams;
  events: EventPlacement;
}

const ink = { time: pixel('#444444'), detail: pixel('#666666'), bar: pixel('#222222'), white: pixel('#ffffff') };

function mean(values: Float64Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += values[i]!;
  return to > from ? sum / (to - from) : 0;
}

function formatAmplitude(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 1) return value.toFixed(1);
  return value.toPrecision(2);
}

export async function plotWindow(deps: RecordingReadDeps, user: User | undefined, req: PlotRequest): Promise<Plot> {
  const { window } = req;
  const exact = { format: 'f32', dtype: 'float64' } as const;
  const plan = await planWindow(deps, user, window, exact);
  const { group } = plan;
  if (plan.count > MAX_PLOT_SECONDS * group.rate + 1e-9) {
    throw new NdsError('validation_failed', { message: `A plot spans at most ${MAX_PLOT_SECONDS} s; this window spans ${(plan.count / group.rate).toFixed(3)} s.`, details: [`duration_s: at most ${MAX_PLOT_SECONDS}`] });
  }
  const sources: SourceChannel[] = group.channels.map((c) => ({ label: c.label, type: c.type, unit: c.unit, bad: c.status === 'bad' }));
  const settings = { ...defaultSettings(sources), shown: plan.rows, reference: parseReference(req.ref, sources), filter: req.filter, ...parseScales(req.scale) };
  const rows = derivations(sources, settings.shown, settings.reference);
  if (rows.length > MAX_PLOT_ROWS) {
    throw new NdsError('validation_failed', { message: `A plot draws at most ${MAX_PLOT_ROWS} rows; this selection has ${rows.length}.`, details: ['channels or channel_type: fewer channels'] });
  }

  // The montage's sources over the window and the filters' margin, exact samples in physical units.
  const margin = filterActive(req.filter) ? filterMarginSamples(req.filter, group.rate) : 0;
  const from = Math.max(0, plan.start - margin);
  const to = Math.min(group.n_samples, plan.start + plan.count + margin);
  const sections = filterSections(req.filter, group.rate);
  const pad = Math.max(margin, Math.round(group.rate));
  checkFilterWork(req.filter, group.rate, rows.length, to - from, sections.length, pad);
  const needed = sourcesOf(rows);
  const read = await planWindow(deps, user, { dataset_id: window.dataset_id, path: window.path, group: group.name, channels: needed.map((i) => group.channels[i]!.label), start_sample: from, n_samples: to - from }, exact);
  const source = new Map<number, Float64Array>();
  for await (const { index, values } of windowRows(deps, read)) source.set(needed[index]!, Float64Array.from(values));
  const samples = applyMontage(rows, source, to - from);
  // The filters are the costly part (up to MAX_FILTER_WORK a plot): they run a slice at a time, and other
  // requests get the event loop between slices.
  let slice = 0;
  for (const row of samples) {
    for (const done of filtfiltSteps(row, sections, pad, FILTER_SLICE_WORK)) {
      slice += done;
      if (slice >= FILTER_SLICE_WORK) {
        slice = 0;
        await nextTurn();
      }
    }
  }

  const layout = traceLayout(req.width, req.height, Math.max(1, rows.length));
  const spp = plan.count / layout.plotWidth;
  const startSeconds = plan.start / group.rate;
  const secondsPerPixel = spp / group.rate;
  const drawn: DrawnRow[] = [];
  const scales: Plot['scales'] = [];
  rows.forEach((r, i) => {
    const values = samples[i]!;
    const envelope = sampleEnvelope(values, from, plan.start, spp, layout.plotWidth, group.n_samples);
    const scale = settings.auto ? 'auto' : scaleOf(settings.scales, r.type);
    const range = envelopeRange(envelope) ?? ([0, 0] as [number, number]);
    // Fixed scales centre each row on its mean over the window (the DC a high-pass would remove), as the viewer does.
    const rowScale: RowScale = scale === 'auto' ? autoRowScale(range, layout.rowHeight, 1) : { baseline: mean(values, plan.start - from, plan.start + plan.count - from), pixelsPerUnit: pixelsPerUnit(scale, layout.rowHeight, r.unit) };
    const unit = unitSymbol(r.unit);
    drawn.push({
      label: r.bad ? `${r.label} (bad)` : r.label,
      detail: scale === 'auto' ? `±${formatAmplitude((range[1] - range[0]) / 2)} ${unit}` : '',
      colour: r.bad ? badColour : typeColour(r.type),
      envelope,
      scale: rowScale,
      clipToRow: scale === 'auto',
    });
    scales.push({ label: r.label, scale, baseline: rowScale.baseline, pixelsPerUnit: rowScale.pixelsPerUnit });
  });

  const onsets = await readStoreEvents(deps.objects, plan.store, group.name);
  const labels = await readEventLabels(deps.objects, plan.store);
  const markers: EventMarker[] = onsets.map((e, i) => ({ onset: e.onset, duration: e.duration, label: labels[i] ?? 'n/a' }));
  const events = placeEvents(markers, eventColours(markers), { startSeconds, secondsPerPixel, plotLeft: layout.plotLeft, plotWidth: layout.plotWidth });
  const fixed = rows.map((r, i) => ({ r, scale: scales[i]!.scale })).find((x) => x.scale !== 'auto');
  const scaleBar = fixed ? formatScale(fixed.scale as number, microvoltFactor(fixed.r.unit) !== undefined ? 'µV' : unitSymbol(fixed.r.unit)) : undefined;
  const frame: FrameInput = { layout, startSeconds, secondsPerPixel, rows: drawn, events, formatTime: (t, step) => formatTime(t, 's', step), scaleBar };

  const image: Image = { width: layout.width, height: layout.height, pixels: new Uint32Array(layout.width * layout.height).fill(ink.white) };
  drawFrame(image, frame);
  const viewQuery = new URLSearchParams();
  writeViewQuery(viewQuery, { startSeconds, spanSeconds: plan.count / group.rate, settings: { ...settings, rowsPerPage: rowsPerPageChoices.find((n) => n >= rows.length) ?? MAX_PLOT_ROWS } }, sources);
  return {
    png: encodePng(image.width, image.height, image.pixels),
    group: group.name,
    zarr: plan.store.prefix.split('/zarr/')[1]!.replace(/\/$/, ''),
    startSeconds,
    spanSeconds: plan.count / group.rate,
    rows: rows.map((r) => r.label),
    layout,
    scales,
    viewQuery,
    events,
  };
}

/** Refuses, before anything is read, a plot whose filters would take more than `MAX_FILTER_WORK`, saying what to narrow. */
function checkFilterWork(filter: DisplayFilter, rate: number, rows: number, samples: number, sections: number, pad: number): void {
  const work = rows * filterWork(samples, sections, pad);
  if (work <= MAX_FILTER_WORK) return;
  const details = ['duration_s or n_samples: a shorter window', 'channels or channel_type: fewer channels'];
  const notches = filter.notch ? filterSections({ notch: filter.notch }, rate).length : 0;
  if (notches > 0) details.push(`notch: leave it out (${filter.notch} Hz and its harmonics up to ${NOTCH_TOP_HZ} Hz are ${notches} of the ${sections} sections)`);
  if (filter.hp && filter.hp < 3) details.push(`hp: a higher corner (a ${filter.hp} Hz high-pass reads and pads ${Math.min(30, 3 / filter.hp).toFixed(1)} s beside the window on each side)`);
  details.push('group: a group with a lower rate, where the recording has one');
  throw new NdsError('validation_failed', {
    message: `Filtering this plot takes ${work} section-samples (${rows} rows × ${work / (rows * sections * 2)} samples, the window with the filters' margins and padding, × ${sections} filter sections × 2 passes at ${rate} Hz); one plot may take at most ${MAX_FILTER_WORK}.`,
    details,
  });
}

/** The viewer's `drawFrame` (web/viewer/draw-traces.ts) onto an image: the same pixels for the plot, bitmap text for the rest. */
function drawFrame(image: Image, f: FrameInput): void {
  const l = f.layout;
  const { top0, height } = plotBufferRows(l);
  const plot = new Uint32Array(l.plotWidth * height);
  paintPlotPixels(plot, f);
  for (let y = 0; y < height && top0 + y < image.height; y++) image.pixels.set(plot.subarray(y * l.plotWidth, (y + 1) * l.plotWidth), (top0 + y) * image.width + l.plotLeft);
  // Times under the plot, centred on their grid lines.
  const step = tickStep(f.secondsPerPixel);
  const end = f.startSeconds + l.plotWidth * f.secondsPerPixel;
  for (let t = Math.ceil(f.startSeconds / step) * step; t <= end; t += step) {
    const text = f.formatTime(Number(t.toFixed(9)), step);
    drawText(image, text, Math.round(l.plotLeft + (t - f.startSeconds) / f.secondsPerPixel) - textWidth(text) / 2, l.plotTop + l.plotHeight + 5, ink.time);
  }
  // Row labels, middle of each row; a second line (the autoscaled range) when the row is tall enough.
  const labelWidth = l.plotLeft - 24;
  f.rows.forEach((row, i) => {
    const middle = l.plotTop + i * l.rowHeight + l.rowHeight / 2;
    const twoLines = l.rowHeight > 28 && row.detail !== '';
    drawText(image, fitText(row.label, labelWidth), 6, middle - (twoLines ? 7 : 0) - GLYPH_HEIGHT / 2, pixel(row.colour));
    if (twoLines) drawText(image, fitText(row.detail, labelWidth), 6, middle + 8 - GLYPH_HEIGHT / 2, ink.detail);
  });
  drawEvents(image, f);
  if (f.scaleBar !== undefined && f.rows.length > 0) {
    const x = l.plotLeft - 10;
    const bottom = l.plotTop + l.plotHeight;
    fillRect(image, x, Math.round(bottom - l.rowHeight), 2, Math.round(l.rowHeight), ink.bar);
    fillRect(image, x - 3, Math.round(bottom - l.rowHeight), 8, 1, ink.bar);
    fillRect(image, x - 3, Math.round(bottom) - 1, 8, 1, ink.bar);
    drawText(image, f.scaleBar, l.plotLeft - 24 - textWidth(f.scaleBar), bottom + 5, ink.bar);
  }
}

/** Lines through the plot with labels in the top band; or, when crowded, ticks and a density strip above it. */
function drawEvents(image: Image, f: FrameInput): void {
  const l = f.layout;
  const inPlot = f.events.events.filter((e) => e.x >= l.plotLeft && e.x < l.plotLeft + l.plotWidth);
  if (f.events.mode === 'lines') {
    for (const e of inPlot) fillRect(image, e.x, l.plotTop - 4, 1, l.plotHeight + 4, pixel(e.colour));
    const byX = new Map(inPlot.map((e) => [e.x, e.colour]));
    for (const placed of placeEventLabels(inPlot.map((e) => ({ x: e.x, label: e.label })), l.plotLeft + l.plotWidth, textWidth)) {
      drawText(image, placed.text, placed.x, 2, pixel(byX.get(placed.x - 3) ?? '#444444'));
    }
    return;
  }
  const band = l.plotTop - 2;
  const counts = new Map<number, number>();
  for (const e of f.events.events) {
    for (let x = Math.max(l.plotLeft, e.x); x <= Math.min(l.plotLeft + l.plotWidth - 1, Math.max(e.x, e.x1)); x++) counts.set(x, (counts.get(x) ?? 0) + 1);
  }
  const most = Math.max(1, ...counts.values());
  for (const [x, n] of counts) fillRect(image, x, 2, 1, band - 8, pixel('#444444', 0.15 + 0.6 * (n / most)));
  for (const e of inPlot) fillRect(image, e.x, band - 5, 1, 5, pixel(e.colour));
}
