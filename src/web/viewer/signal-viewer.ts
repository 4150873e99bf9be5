/**
 * The viewer: keeps the window, the view settings (channels, montage, filters, scales) and the row page,
 * fetches exactly the chunks that cover the window (at level 0 with the filters' margin; then one more each
 * side as prefetch), and redraws. Its last frame is mirrored on `window.ndsViewer` and readiness on the root
 * element's `data-ready`, for people debugging and for the browser tests.
 */
import { columnSpans, envelopeRange, sampleEnvelope, type ColumnEnvelope, type ColumnSpans } from '../../signals/column-envelope.js';
import { badColour, formatScale, isVoltage, microvoltFactor, pixelsPerUnit, scaleOf, typeColour, typeKey, unitSymbol } from '../../signals/channel-scale.js';
import { drawFrame, preparePlotPixels, type AxisLabel, type DrawnRow, type FrameInput } from './draw-traces.js';
import type { AnnotationIndex } from './annotation-index.js';
import { placeAnnotations, type AnnotationDraft, type AnnotationPlacement } from './annotation-marks.js';
import { drawAnnotations } from './draw-annotations.js';
import { eventColours, placeEvents, type EventPlacement } from '../../signals/event-marks.js';
import { filterActive, filterMarginSamples, filterSections, type Biquad } from '../../signals/iir-filter.js';
import { chooseLevel, chunksCovering, levelColumns, withPrefetch, type ChunkSpan } from './level-choice.js';
import { derivations, formatReference, type Derivation, type SourceChannel } from '../../signals/montage.js';
import type { EventMarker, GroupMeta, RecordingStore } from './recording-store.js';
import { columnReader, derivationReader, physicalReader, viewLevelRow } from './view-level-rows.js';
import type { FrameRow, ViewerState } from './viewer-state.js';
import { LruCache } from './lru-cache.js';
import { rowSamples, windowMean, type RowSamples } from './row-samples.js';
import { formatTime, type TimeFormat } from '../../signals/time-format.js';
import { autoRowScale, traceLayout, type RowScale, type TraceLayout } from '../../signals/trace-layout.js';
import { defaultSettings, type ViewSettings } from '../../signals/view-settings.js';
import { clampWindow, type ViewWindow } from './view-window.js';

export type { FrameRow, ViewerState } from './viewer-state.js';

export interface SignalViewerOptions {
  root: HTMLElement;
  canvas: HTMLCanvasElement;
  store: RecordingStore;
  recording: string;
  group: GroupMeta;
  /** Event markers; undefined while they load (then `setEvents`). */
  events?: EventMarker[] | undefined;
  settings?: ViewSettings | undefined;
  /** Initial window in seconds (default 10 s, or the whole recording when shorter). */
  initialSeconds?: number | undefined;
  /** Time at the initial window's left edge, in seconds (default 0). */
  initialStartSeconds?: number | undefined;
  /** Start of the recording (ms, wall clock read as UTC) for clock times. */
  epoch?: number | undefined;
  onState?: (state: ViewerState) => void;
}

/** With a montage or filters on, level 0 is kept up to this many samples a pixel. */
const processedSamplesPerPixel = 8;

/** How long the first frame of a window waits for its data before drawing the rows empty. */
const blankFrameDelayMs = 250;

export class SignalViewer {
  readonly #o: SignalViewerOptions;
  readonly #g: GroupMeta;
  readonly sources: SourceChannel[];
  #settings: ViewSettings;
  #window: ViewWindow;
  #rowFirst = 0;
  #gain = 1;
  #events: EventMarker[] | undefined;
  #eventColours = new Map<string, string>();
  hiddenEventTypes = new Set<string>();
  /** The recording's annotations (undefined while they load) and the one being drawn or edited. */
  #annotations: AnnotationIndex | undefined;
  #annotationFocus: { draft?: AnnotationDraft | undefined; selected?: string | undefined } = {};
  #generation = 0;
  #renders = 0;
  /** The commit asked for and not yet run (one per animation frame). */
  #scheduled: Promise<void> | undefined;
  /** Renders waiting for chunks. */
  #loading = 0;
  /** Markers that arrived while a render waited and no frame has drawn yet. */
  #eventsPending = false;
  /**
   * Complete level-0 computations by span and rows, reused while the window stays inside their chunks; the
   * spans one chunk either side are computed when the viewer is idle, so a pan across a chunk boundary
   * finds its samples filtered already.
   */
  readonly #samples = new LruCache<string, RowSamples>(4);
  /** Work for when the prefetch has landed: filtering the neighbouring spans. */
  #idleWork: (() => boolean) | undefined;
  #last: ViewerState | undefined;
  /** Each row's pixel-column arrays, refilled every frame (drawing reads them before the next frame). */
  readonly #envelopes: ColumnEnvelope[] = [];
  /** The samples each pixel column covers at level 0, refilled every frame. */
  #spans: ColumnSpans | undefined;
  /** The same two for the frame painted ahead (`#prepareNext`), which must not share the drawn frame's arrays. */
  readonly #aheadEnvelopes: ColumnEnvelope[] = [];
  #aheadSpans: ColumnSpans | undefined;
  /** The window of the last commit, and how far the last pan moved it (samples; undefined after a zoom). */
  #committed: ViewWindow | undefined;
  #step: number | undefined;

  constructor(options: SignalViewerOptions) {
    this.#o = options;
    this.#g = options.group;
    this.sources = this.#g.channels.map((c) => ({ label: c.label, type: c.type, unit: c.unit, bad: c.status === 'bad' }));
    this.#settings = options.settings ?? defaultSettings(this.sources);
    this.#events = options.events;
    if (options.events) this.#eventColours = eventColours(options.events);
    const seconds = options.initialSeconds ?? 10;
    const start = Math.round((options.initialStartSeconds ?? 0) * this.#g.rate);
    this.#window = clampWindow({ start, span: Math.round(seconds * this.#g.rate) }, this.#g.nSamples);
  }

  /**
   * Markers arrive after the first frame: the traces do not wait for them. A render still waiting for
   * chunks draws them when it finishes; only an idle viewer redraws now.
   */
  setEvents(events: EventMarker[]): void {
    this.#events = events;
    this.#eventColours = eventColours(events);
    if (this.#loading === 0) void this.render();
    else this.#eventsPending = true;
  }

  /** A new set of annotations (after a load, an edit, another user's change): redrawn at the next frame. */
  setAnnotations(index: AnnotationIndex): void {
    this.#annotations = index;
    void this.render();
  }

  get annotations(): AnnotationIndex | undefined {
    return this.#annotations;
  }

  /** The span being dragged or edited (drawn dashed over the others) and the annotation the form is open on. */
  setAnnotationFocus(focus: { draft?: AnnotationDraft | undefined; selected?: string | undefined }): void {
    this.#annotationFocus = { ...focus };
    void this.render();
  }

  get events(): EventMarker[] {
    return this.#events ?? [];
  }

  get eventColourMap(): ReadonlyMap<string, string> {
    return this.#eventColours;
  }

  get group(): GroupMeta {
    return this.#g;
  }

  get window(): ViewWindow {
    return this.#window;
  }

  get settings(): ViewSettings {
    return this.#settings;
  }

  get epoch(): number | undefined {
    return this.#o.epoch;
  }

  get last(): ViewerState | undefined {
    return this.#last;
  }

  setWindow(w: ViewWindow): void {
    this.#window = clampWindow(w, this.#g.nSamples);
    void this.render();
  }

  /** Replaces the settings (a copy is kept) and redraws from the first page when the rows changed. */
  setSettings(settings: ViewSettings): void {
    const rowsBefore = this.#rowKey(this.#settings);
    this.#settings = { ...settings, shown: [...settings.shown], scales: { ...settings.scales }, filter: { ...settings.filter } };
    if (this.#rowKey(this.#settings) !== rowsBefore) this.#rowFirst = 0;
    void this.render();
  }

  /** The rows of the montage, bad ones left out when hidden. */
  allRows(settings = this.#settings): Derivation[] {
    const rows = derivations(this.sources, settings.shown, settings.reference);
    return settings.hideBad ? rows.filter((r) => !r.bad) : rows;
  }

  pageRows(delta: number): void {
    const total = this.allRows().length;
    const size = this.#settings.rowsPerPage;
    const pages = Math.max(1, Math.ceil(total / size));
    const page = Math.min(pages - 1, Math.max(0, Math.floor(this.#rowFirst / size) + delta));
    this.#rowFirst = page * size;
    void this.render();
  }

  setGain(gain: number): void {
    this.#gain = Math.min(64, Math.max(1 / 64, gain));
    void this.render();
  }

  get gain(): number {
    return this.#gain;
  }

  /** Width of the plot in device pixels (what level choice compares the window against). */
  plotWidth(): number {
    return this.#layout(this.#settings.rowsPerPage).plotWidth;
  }

  /** A time in the user's format. */
  formatTime(seconds: number, resolution: number, format: TimeFormat = this.#settings.timeFormat): string {
    return formatTime(seconds, format, resolution, this.#o.epoch);
  }

  #rowKey(s: ViewSettings): string {
    return `${s.shown.join(',')}|${formatReference(s.reference) ?? ''}|${s.hideBad}`;
  }

  /** `resize`: size the canvas to it (which clears it); not for a frame painted ahead, off screen. */
  #layout(rows: number, resize = true): TraceLayout {
    const { canvas } = this.#o;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (resize && canvas.width !== width) canvas.width = width;
    if (resize && canvas.height !== height) canvas.height = height;
    return traceLayout(width, height, rows);
  }

  /**
   * Asks for a frame: setters only record what changed and call this, and one commit runs per animation frame
   * however many setters ran before it (a wheel burst, a key held down). Resolves when that commit has drawn
   * what is in memory (not when its chunks have arrived).
   */
  render(): Promise<void> {
    if (!this.#scheduled) {
      this.#scheduled = new Promise<void>((resolve) => {
        const run = () => {
          this.#scheduled = undefined;
          void this.#commit(resolve);
        };
        // A hidden page gets no animation frames; it still commits (the tests and a background tab's first frame).
        if (document.visibilityState === 'hidden') setTimeout(run, 0);
        else requestAnimationFrame(run);
      });
    }
    return this.#scheduled;
  }

  /** One commit: plan, draw what is in memory, fetch what is missing, draw again. */
  async #commit(drawn: () => void): Promise<void> {
    const generation = ++this.#generation;
    let plan: FramePlan;
    try {
      plan = await this.#plan();
    } catch (err) {
      drawn();
      throw err;
    }
    if (generation !== this.#generation) return drawn();
    this.#trackStep(plan.window);
    const { store } = this.#o;
    const g = this.#g;
    const missing = plan.wanted.filter(([cc, tc]) => !store.cached(g.name, plan.level, cc, tc));
    const loading = Promise.all(missing.map(([cc, tc]) => store.chunk(g.name, plan.level, cc, tc)));
    if (missing.length > 0) {
      // The requests leave before a partial frame is drawn: zarrita sends each a few promise steps after
      // `chunk()`. With nothing of the window in memory (the first frame, a jump) a partial frame would be
      // empty rows, and the first frames take longer than the requests (the drawing code is not yet compiled):
      // it is drawn only if the data is slow to come.
      const blank = missing.length === plan.wanted.length;
      const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await (blank ? Promise.race([loading.catch(() => undefined), delay(blankFrameDelayMs)]) : delay(0));
    }
    if (generation === this.#generation && this.#frame(plan)) {
      drawn();
      return this.#prefetch(plan);
    }
    drawn();
    this.#loading++;
    try {
      await loading;
    } finally {
      this.#loading--;
    }
    if (generation !== this.#generation) {
      // A newer commit may have drawn before the markers came and finished without waiting.
      if (this.#loading === 0 && this.#eventsPending) void this.render();
      return;
    }
    this.#frame(plan);
    this.#prefetch(plan);
  }

  /**
   * A pan moves the window by a step and the next is likely the same step (an arrow key pressed again, held, a
   * reader paging on): that is the frame painted ahead. A commit in place (annotations, markers) keeps the step;
   * a zoom forgets it.
   */
  #trackStep(w: ViewWindow): void {
    const last = this.#committed;
    this.#committed = w;
    if (!last || last.span !== w.span) this.#step = undefined;
    else if (last.start !== w.start) this.#step = w.start - last.start;
  }

  /**
   * Plan: which level, rows, chunks and filter sections this frame needs. No samples are touched. `offScreen`:
   * for a frame painted ahead, which leaves the canvas as it is (sizing it clears it).
   */
  async #plan(w: ViewWindow = this.#window, offScreen = false): Promise<FramePlan> {
    const g = this.#g;
    const s = this.#settings;
    const all = this.allRows();
    if (this.#rowFirst >= all.length) this.#rowFirst = Math.max(0, Math.floor((all.length - 1) / s.rowsPerPage) * s.rowsPerPage);
    const rowFirst = this.#rowFirst;
    const pageRows = all.slice(rowFirst, rowFirst + s.rowsPerPage);
    const layout = this.#layout(Math.max(1, Math.min(s.rowsPerPage, all.length)), !offScreen);
    const processing = filterActive(s.filter) || s.reference.kind !== 'own';
    const level =
      s.level !== undefined
        ? Math.min(s.level, g.viewLevels)
        : chooseLevel({ windowSamples: w.span, pixelWidth: layout.plotWidth, viewLevels: g.viewLevels, downsample: g.downsample, ...(processing ? { level0SamplesPerPixel: processedSamplesPerPixel } : {}) });
    const array = await this.#o.store.level(g.name, level);
    const channelsPerChunk = level === 0 ? array.chunks[0]! : array.chunks[1]!;
    const columns = levelColumns(g.nSamples, level, g.downsample);
    const chunkColumns = level === 0 ? array.chunks[1]! : array.chunks[2]!;
    const nChunks = Math.ceil(columns / chunkColumns);
    const covering = (start: number) => chunksCovering({ start, end: start + w.span, level, downsample: g.downsample, chunkColumns, levelColumns: columns });
    const visible = covering(w.start);
    // Level 0 reads the montage's sources over the window and the filters' margin; view levels the same sources' envelopes.
    const margin = level === 0 && filterActive(s.filter) ? filterMarginSamples(s.filter, g.rate) : 0;
    // With filters, the span read is a fixed number of chunks from the one holding the margin's start: it changes
    // once per chunk of panning, and its neighbours (one chunk either way) are filtered ahead, while idle.
    // Without, the span is the visible chunks (no more is fetched than the screen shows, plus the prefetch).
    const spanChunks = Math.ceil((w.span + 2 * margin) / chunkColumns) + 1;
    const filteredSpan = (first: number): ChunkSpan => ({ first, last: Math.min(nChunks - 1, first + spanChunks - 1) });
    const needed = margin > 0 ? filteredSpan(Math.max(0, Math.floor((w.start - margin) / chunkColumns))) : visible;
    const prefetch = withPrefetch(needed, 1, nChunks);
    const sources = [...new Set(pageRows.flatMap((r) => [r.plus, ...r.minus]))];
    const channelChunks = [...new Set(sources.map((c) => Math.floor(c / channelsPerChunk)))].sort((a, b) => a - b);
    const wanted = channelChunks.flatMap((cc) => range(needed.first, needed.last).map((tc) => [cc, tc] as const));
    const ahead = margin > 0 ? [filteredSpan(needed.first + 1), filteredSpan(needed.first - 1)] : [covering(w.start + w.span / 10), covering(w.start - w.span / 10)];
    return {
      window: w, settings: s, all, rowFirst, pageRows, layout, processing, level, channelsPerChunk, columns, chunkColumns,
      visible, margin, needed, prefetch, channelChunks, wanted, ahead, sections: filterSections(s.filter, g.rate), gain: this.#gain,
    };
  }

  /** Compute, paint and publish one frame of `plan` from the chunks in memory; true when none was missing. */
  #frame(plan: FramePlan): boolean {
    const began = performance.now();
    const computed = this.#compute(plan);
    const drawBegan = performance.now();
    const painted = this.#paint(plan, computed);
    const drawMs = performance.now() - drawBegan;
    this.#renders++;
    this.#publishFrame(plan, computed, painted, { frameMs: performance.now() - began, computeMs: computed.computeMs, drawMs });
    return computed.complete;
  }

  /**
   * Compute: each row's values and pixel columns at the plan's level, their scales, and the events' places.
   * `ahead`: for a frame painted ahead, into arrays of its own and without scheduling idle work.
   */
  #compute(plan: FramePlan, ahead = false): ComputedFrame {
    const g = this.#g;
    const { level, layout, window: w, pageRows, chunkColumns, channelsPerChunk, margin, needed, channelChunks } = plan;
    const generation = this.#generation;
    const chunk = (cc: number, tc: number) => this.#o.store.cached(g.name, level, cc, tc);
    const complete = plan.wanted.every(([cc, tc]) => chunk(cc, tc) !== undefined);
    const spp = w.span / layout.plotWidth;
    let rows: FrameRow[];
    let envelopes: ColumnEnvelope[];
    let valuesStart: number;
    let computeMs = 0;
    if (level === 0) {
      const s = plan.settings;
      const rowsKey = pageRows.map((r) => `${r.plus}-${r.minus.join('+')}`).join(',');
      const filterKey = `${s.filter.hp}|${s.filter.lp}|${s.filter.notch}`;
      const spanKey = (first: number, last: number) => `${first}|${last}|${rowsKey}|${filterKey}`;
      const spanSamples = (first: number, last: number) => {
        const from = first * chunkColumns;
        const to = Math.min(g.nSamples, (last + 1) * chunkColumns);
        const key = spanKey(first, last);
        let found = this.#samples.get(key);
        if (!found) {
          const began = performance.now();
          found = rowSamples({ channels: g.channels, rows: pageRows, from, to, channelsPerChunk, chunkColumns, chunk, sections: plan.sections, pad: Math.max(margin, Math.round(g.rate)) });
          if (found.complete) this.#samples.set(key, found);
          computeMs += performance.now() - began;
        }
        return found;
      };
      const samples = spanSamples(needed.first, needed.last);
      if (samples.complete && !ahead) {
        // The spans the next pans need, computed while idle: with filters the fixed span one chunk either way;
        // without, the visible chunks after an arrow key's pan (a tenth of the window) either way.
        // One span a call, so no task blocks a key press for long; true while there is more to do.
        this.#idleWork = () => {
          if (generation !== this.#generation) return false;
          for (const { first, last } of plan.ahead) {
            if (first < 0 || first > last || this.#samples.has(spanKey(first, last))) continue;
            if (!channelChunks.every((cc) => chunk(cc, first) && chunk(cc, last))) continue;
            spanSamples(first, last);
            return true;
          }
          return false;
        };
      }
      const first = Math.max(0, Math.floor(w.start));
      const last = Math.min(g.nSamples, Math.ceil(w.start + w.span));
      valuesStart = first;
      // Every row's columns cover the same samples: placed once, then each row's min and max over them.
      const into = ahead ? this.#aheadEnvelopes : this.#envelopes;
      const spans = columnSpans(samples.from, samples.to, w.start, spp, layout.plotWidth, g.nSamples, ahead ? this.#aheadSpans : this.#spans);
      if (ahead) this.#aheadSpans = spans;
      else this.#spans = spans;
      envelopes = samples.rows.map((values, i) => (into[i] = sampleEnvelope(values, samples.from, w.start, spp, layout.plotWidth, g.nSamples, into[i], spans)));
      rows = pageRows.map((r, i) => this.#frameRow(r, samples.rows[i]!.subarray(first - samples.from, last - samples.from), () => windowMean(samples, i, first, last)));
    } else {
      const began = performance.now();
      const factor = g.downsample ** level;
      const firstColumn = Math.max(0, Math.floor(w.start / factor));
      const lastColumn = Math.min(plan.columns, Math.ceil((w.start + w.span) / factor));
      valuesStart = firstColumn;
      envelopes = [];
      // A montage's rows stay its rows zoomed out: the bound of each derivation from its channels' envelopes.
      const reader = (c: number) => physicalReader(g.channels[c]!, columnReader(chunk, Math.floor(c / channelsPerChunk), chunkColumns, level, c % channelsPerChunk));
      rows = pageRows.map((r) => {
        const { envelope, pairs } = viewLevelRow(derivationReader(r, reader), { start: w.start, samplesPerPixel: spp, pixelWidth: layout.plotWidth, factor, levelColumns: plan.columns }, firstColumn, lastColumn);
        envelopes.push(envelope);
        return this.#frameRow(r, pairs);
      });
      computeMs += performance.now() - began;
    }
    const ranges = envelopes.map((e) => envelopeRange(e) ?? ([0, 0] as [number, number]));
    const drawn: DrawnRow[] = rows.map((row, i) => {
      const auto = row.scale === 'auto';
      const scale: RowScale = auto ? autoRowScale(ranges[i]!, layout.rowHeight, plan.gain) : { baseline: row.baseline, pixelsPerUnit: pixelsPerUnit(row.scale as number, layout.rowHeight, row.unit) };
      row.baseline = scale.baseline;
      row.pixelsPerUnit = scale.pixelsPerUnit;
      // Fixed scales are in the toolbar and the scale bar; autoscaled rows say what their height means, in their unit.
      const detail = auto ? `±${formatAmplitude((ranges[i]![1] - ranges[i]![0]) / 2 / plan.gain)} ${row.unit}`.trimEnd() : '';
      return { label: row.bad ? `${row.label} (bad)` : row.label, detail, colour: row.colour, envelope: envelopes[i]!, scale, clipToRow: auto };
    });
    if (this.#events && !ahead) this.#eventsPending = false;
    const startSeconds = w.start / g.rate;
    const secondsPerPixel = spp / g.rate;
    const events = placeEvents(this.#events ?? [], this.#eventColours, { startSeconds, secondsPerPixel, plotLeft: layout.plotLeft, plotWidth: layout.plotWidth }, this.hiddenEventTypes);
    const rowChannels = pageRows.map((r) => this.sources[r.plus]?.label ?? r.label);
    const annotations = placeAnnotations(this.#annotations, { startSeconds, secondsPerPixel, plotLeft: layout.plotLeft, plotWidth: layout.plotWidth, rowChannels }, this.#annotationFocus);
    return { complete, rows, drawn, ranges, valuesStart, events, annotations, rowChannels, startSeconds, secondsPerPixel, computeMs };
  }

  /** Paint: the frame onto the canvas. Returns where the time labels landed. */
  #paint(plan: FramePlan, c: ComputedFrame): PaintedFrame {
    const ctx = this.#o.canvas.getContext('2d')!;
    const { axis, plotPrepared } = drawFrame(ctx, this.#frameInput(plan, c));
    drawAnnotations(ctx, plan.layout, c.annotations);
    return { axis, plotPrepared };
  }

  #frameInput(plan: FramePlan, c: ComputedFrame): FrameInput {
    return { layout: plan.layout, startSeconds: c.startSeconds, secondsPerPixel: c.secondsPerPixel, rows: c.drawn, events: c.events, formatTime: (t, step) => this.formatTime(t, step), scaleBar: this.#scaleBarText(c.rows) };
  }

  /**
   * While idle, after a pan: the plot's pixels of the window one more step on, from the samples in memory, so
   * that a pan there puts them on the canvas instead of painting (`drawFrame` compares the whole input: a frame
   * that differs in any way, from settings changed since or a different pan, is painted as usual).
   */
  async #prepareNext(generation: number): Promise<void> {
    const w = this.#window;
    if (this.#step === undefined || this.#committed !== w) return;
    const next = clampWindow({ start: w.start + this.#step, span: w.span }, this.#g.nSamples);
    if (next.start === w.start) return;
    const plan = await this.#plan(next, true);
    // At level 0 painting is most of a frame (its samples are filtered ahead and kept); at a view level the
    // envelopes' reading is, and a frame ahead would double a pan's work for little.
    if (generation !== this.#generation || plan.level !== 0) return;
    const computed = this.#compute(plan, true);
    if (!computed.complete) return;
    preparePlotPixels(this.#frameInput(plan, computed));
    // Where the pixels painted ahead are for (its first sample), for people debugging and for the tests.
    this.#o.root.dataset['paintedAhead'] = String(next.start);
  }

  /** Publish: the frame's state on `window.ndsViewer` (through `onState`) and readiness on the root element. */
  #publishFrame(plan: FramePlan, c: ComputedFrame, painted: PaintedFrame, times: { frameMs: number; computeMs: number; drawMs: number }): void {
    const g = this.#g;
    const { level, layout, processing, window: w } = plan;
    const s = plan.settings;
    const note =
      level === 0
        ? processing && !c.complete
          ? 'filters wait for the samples…'
          : ''
        : processing
          ? `view level ${level}: ${s.reference.kind !== 'own' ? "the montage's rows as bounds of the recorded channels' envelopes; " : 'envelopes of the recorded channels; '}filters apply when zoomed in to ≤ ${Math.floor((processedSamplesPerPixel * layout.plotWidth) / g.rate)} s`
          : '';
    this.#publish({
      ready: c.complete && this.#events !== undefined,
      tracesReady: c.complete,
      recording: this.#o.recording,
      group: g.name,
      rate: g.rate,
      nSamples: g.nSamples,
      level,
      start: w.start,
      end: w.start + w.span,
      channelFirst: plan.rowFirst,
      channelCount: plan.pageRows.length,
      totalRows: plan.all.length,
      gain: plan.gain,
      plot: { left: layout.plotLeft, top: layout.plotTop, width: layout.plotWidth, height: layout.plotHeight, rowHeight: layout.rowHeight },
      canvas: { width: layout.width, height: layout.height },
      axis: painted.axis,
      plotPrepared: painted.plotPrepared,
      ranges: c.ranges,
      rows: c.rows,
      valuesStart: c.valuesStart,
      processed: level === 0 && c.complete && processing,
      note,
      reference: formatReference(s.reference) ?? 'own',
      filter: { ...s.filter },
      events: c.events,
      rowChannels: c.rowChannels,
      annotationsDrawn: c.annotations.spans,
      annotationMode: c.annotations.mode,
      annotationsInView: c.annotations.inView,
      annotationsTotal: c.annotations.total,
      annotationsLoaded: this.#annotations !== undefined,
      visibleChunks: plan.visible,
      prefetchChunks: plan.prefetch,
      renders: this.#renders,
      ...times,
    });
  }

  /** `windowMean`: the mean of `values` when the caller has a faster way to it. */
  #frameRow(r: Derivation, values: Float64Array, windowMean: () => number = () => mean(values)): FrameRow {
    const scale = this.#settings.auto ? 'auto' : scaleOf(this.#settings.scales, r.type, r.unit);
    const fixed = scale !== 'auto';
    return {
      label: r.label,
      type: r.type,
      unit: unitSymbol(r.unit),
      bad: r.bad,
      colour: r.bad ? badColour : typeColour(r.type),
      scale,
      // Fixed scales centre each row on its mean over the window (the DC a high-pass would remove).
      baseline: fixed ? windowMean() : 0,
      pixelsPerUnit: 0,
      values,
    };
  }

  /** The scale bar's label: the first fixed-scale type on the page (all share one division). */
  #scaleBarText(rows: FrameRow[]): string | undefined {
    const fixed = rows.find((r) => r.scale !== 'auto');
    if (!fixed) return undefined;
    return formatScale(fixed.scale as number, microvoltFactor(fixed.unit) !== undefined ? 'µV' : fixed.unit);
  }

  #publish(state: ViewerState): void {
    this.#last = state;
    this.#o.root.dataset['ready'] = String(state.ready);
    this.#o.onState?.(state);
  }

  #prefetch({ level, channelChunks, needed, prefetch }: FramePlan): void {
    const loads: Array<Promise<unknown>> = [];
    for (const cc of channelChunks) {
      for (let tc = prefetch.first; tc <= prefetch.last; tc++) {
        if (tc >= needed.first && tc <= needed.last) continue;
        loads.push(this.#o.store.chunk(this.#g.name, level, cc, tc).catch(() => undefined));
      }
    }
    const generation = this.#generation;
    const idle = (): void => {
      if (generation !== this.#generation) return;
      if (this.#idleWork?.()) setTimeout(idle, 0);
      else {
        this.#idleWork = undefined;
        // Last, when the neighbouring spans are filtered: the frame after the next pan, painted ahead.
        void this.#prepareNext(generation);
      }
    };
    void Promise.all(loads).then(() => setTimeout(idle, 30));
  }

  /** Types on screen with a sensitivity (voltage rows), for the scale controls. */
  shownTypes(): string[] {
    return [...new Set(this.allRows().filter((r) => isVoltage(r.unit)).map((r) => typeKey(r.type)))];
  }

  /** Every type on the montage's rows, for the filter menus. */
  rowTypes(): string[] {
    return [...new Set(this.allRows().map((r) => typeKey(r.type)))];
  }
}

/** What a commit decided before touching any sample. */
interface FramePlan {
  window: ViewWindow;
  settings: ViewSettings;
  all: Derivation[];
  rowFirst: number;
  pageRows: Derivation[];
  layout: TraceLayout;
  processing: boolean;
  level: number;
  channelsPerChunk: number;
  columns: number;
  chunkColumns: number;
  visible: ChunkSpan;
  margin: number;
  needed: ChunkSpan;
  prefetch: ChunkSpan;
  channelChunks: number[];
  wanted: Array<readonly [number, number]>;
  /** The spans the next pans need, computed while idle. */
  ahead: ChunkSpan[];
  sections: Biquad[];
  gain: number;
}

interface ComputedFrame {
  complete: boolean;
  rows: FrameRow[];
  drawn: DrawnRow[];
  ranges: Array<[number, number]>;
  valuesStart: number;
  events: EventPlacement;
  annotations: AnnotationPlacement;
  rowChannels: string[];
  startSeconds: number;
  secondsPerPixel: number;
  computeMs: number;
}

interface PaintedFrame {
  axis: AxisLabel[];
  plotPrepared: boolean;
}

function mean(values: Float64Array): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) continue;
    sum += v;
    n++;
  }
  return n ? sum / n : 0;
}

function formatAmplitude(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 1) return value.toFixed(1);
  return value.toPrecision(2);
}

function range(first: number, last: number): number[] {
  const out: number[] = [];
  for (let i = first; i <= last; i++) out.push(i);
  return out;
}
