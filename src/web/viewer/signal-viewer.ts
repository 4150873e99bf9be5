/**
 * The viewer: keeps the window and channel page, fetches exactly the chunks that cover it (then one more
 * each side as prefetch), and redraws. Its state is mirrored on `window.ndsViewer` and readiness on the
 * root element's `data-ready`, for people debugging and for the browser tests.
 */
import { columnEnvelope, envelopeRange, type ColumnEnvelope, type ColumnReader } from './column-envelope.js';
import { drawFrame } from './draw-traces.js';
import { chooseLevel, chunksCovering, levelColumns, withPrefetch, type ChunkSpan } from './level-choice.js';
import type { DecodedChunk, EventMarker, GroupMeta, RecordingStore } from './recording-store.js';
import { traceLayout } from './trace-layout.js';
import { clampWindow, type ViewWindow } from './view-window.js';

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
  channelFirst: number;
  channelCount: number;
  gain: number;
  plot: { left: number; top: number; width: number; height: number; rowHeight: number };
  /** Autoscaled physical [min, max] of each row on screen. */
  ranges: Array<[number, number]>;
  /** Chunks of the current level covering the window (time-chunk indices) and with the prefetch. */
  visibleChunks: ChunkSpan;
  prefetchChunks: ChunkSpan;
  renders: number;
}

export interface SignalViewerOptions {
  root: HTMLElement;
  canvas: HTMLCanvasElement;
  store: RecordingStore;
  recording: string;
  group: GroupMeta;
  /** Event markers; undefined while they load (then `setEvents`). */
  events?: EventMarker[] | undefined;
  pageSize?: number;
  /** Initial window in seconds (default 10 s, or the whole recording when shorter). */
  initialSeconds?: number;
  /** Time at the initial window's left edge, in seconds (default 0). */
  initialStartSeconds?: number;
  onState?: (state: ViewerState) => void;
}

export class SignalViewer {
  readonly #o: SignalViewerOptions;
  readonly #g: GroupMeta;
  #window: ViewWindow;
  #channelFirst = 0;
  #gain = 1;
  #events: EventMarker[] | undefined;
  #generation = 0;
  #renders = 0;
  /** Renders waiting for chunks. */
  #loading = 0;
  /** Markers that arrived while a render waited and no frame has drawn yet. */
  #eventsPending = false;
  readonly pageSize: number;

  constructor(options: SignalViewerOptions) {
    this.#o = options;
    this.#g = options.group;
    this.pageSize = options.pageSize ?? 16;
    this.#events = options.events;
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
    if (this.#loading === 0) void this.render();
    else this.#eventsPending = true;
  }

  get group(): GroupMeta {
    return this.#g;
  }

  get window(): ViewWindow {
    return this.#window;
  }

  setWindow(w: ViewWindow): void {
    this.#window = clampWindow(w, this.#g.nSamples);
    void this.render();
  }

  pageChannels(delta: number): void {
    const pages = Math.ceil(this.#g.nChannels / this.pageSize);
    const page = Math.min(pages - 1, Math.max(0, Math.floor(this.#channelFirst / this.pageSize) + delta));
    this.#channelFirst = page * this.pageSize;
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
    return this.#layout().plotWidth;
  }

  #layout() {
    const { canvas } = this.#o;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== width) canvas.width = width;
    if (canvas.height !== height) canvas.height = height;
    return traceLayout(width, height, Math.min(this.pageSize, this.#g.nChannels - this.#channelFirst));
  }

  /** Draws what is in memory at once, then fetches the missing chunks on screen and draws again. */
  async render(): Promise<void> {
    const generation = ++this.#generation;
    const g = this.#g;
    const layout = this.#layout();
    const w = this.#window;
    const level = chooseLevel({ windowSamples: w.span, pixelWidth: layout.plotWidth, viewLevels: g.viewLevels, downsample: g.downsample });
    const array = await this.#o.store.level(g.name, level);
    if (generation !== this.#generation) return;
    const channelsPerChunk = level === 0 ? array.chunks[0]! : array.chunks[1]!;
    const columns = levelColumns(g.nSamples, level, g.downsample);
    const chunkColumns = level === 0 ? array.chunks[1]! : array.chunks[2]!;
    const visible = chunksCovering({ start: w.start, end: w.start + w.span, level, downsample: g.downsample, chunkColumns, levelColumns: columns });
    const prefetch = withPrefetch(visible, 1, Math.ceil(columns / chunkColumns));
    const channelFirst = this.#channelFirst;
    const channelCount = Math.min(this.pageSize, g.nChannels - channelFirst);
    const channelChunks = range(Math.floor(channelFirst / channelsPerChunk), Math.floor((channelFirst + channelCount - 1) / channelsPerChunk));
    const wanted = channelChunks.flatMap((cc) => range(visible.first, visible.last).map((tc) => [cc, tc] as const));

    const frame = () => {
      // The loaded chunks of each channel chunk, by time-chunk index from visible.first.
      const chunks = new Map<number, Array<DecodedChunk | undefined>>();
      let complete = true;
      for (const [cc, tc] of wanted) {
        const chunk = this.#o.store.cached(g.name, level, cc, tc);
        if (!chunks.has(cc)) chunks.set(cc, []);
        chunks.get(cc)![tc - visible.first] = chunk;
        if (!chunk) complete = false;
      }
      const envelopes: ColumnEnvelope[] = [];
      const ranges: Array<[number, number]> = [];
      for (let row = 0; row < channelCount; row++) {
        const channel = channelFirst + row;
        const meta = g.channels[channel]!;
        const envelope = columnEnvelope({
          start: w.start,
          samplesPerPixel: w.span / layout.plotWidth,
          pixelWidth: layout.plotWidth,
          factor: g.downsample ** level,
          levelColumns: columns,
          scale: meta.scale,
          offset: meta.offset,
          read: columnReader(chunks.get(Math.floor(channel / channelsPerChunk)) ?? [], visible.first, chunkColumns, level, channel % channelsPerChunk),
        });
        envelopes.push(envelope);
        ranges.push(envelopeRange(envelope) ?? [0, 0]);
      }
      if (this.#events) this.#eventsPending = false;
      const ctx = this.#o.canvas.getContext('2d')!;
      drawFrame(ctx, {
        layout,
        startSeconds: w.start / g.rate,
        secondsPerPixel: w.span / layout.plotWidth / g.rate,
        channels: g.channels.slice(channelFirst, channelFirst + channelCount),
        envelopes,
        ranges,
        gain: this.#gain,
        events: this.#events ?? [],
      });
      this.#renders++;
      this.#publish({
        ready: complete && this.#events !== undefined,
        tracesReady: complete,
        recording: this.#o.recording,
        group: g.name,
        rate: g.rate,
        nSamples: g.nSamples,
        level,
        start: w.start,
        end: w.start + w.span,
        channelFirst,
        channelCount,
        gain: this.#gain,
        plot: { left: layout.plotLeft, top: layout.plotTop, width: layout.plotWidth, height: layout.plotHeight, rowHeight: layout.rowHeight },
        ranges,
        visibleChunks: visible,
        prefetchChunks: prefetch,
        renders: this.#renders,
      });
      return complete;
    };

    // The requests go out before the partial frame is drawn: drawing takes longer than sending them.
    const missing = wanted.filter(([cc, tc]) => !this.#o.store.cached(g.name, level, cc, tc));
    const loading = Promise.all(missing.map(([cc, tc]) => this.#o.store.chunk(g.name, level, cc, tc)));
    if (frame()) return this.#prefetch(level, channelChunks, visible, prefetch);
    this.#loading++;
    try {
      await loading;
    } finally {
      this.#loading--;
    }
    if (generation !== this.#generation) {
      // A newer render may have drawn before the markers came and finished without waiting.
      if (this.#loading === 0 && this.#eventsPending) void this.render();
      return;
    }
    frame();
    this.#prefetch(level, channelChunks, visible, prefetch);
  }

  #prefetch(level: number, channelChunks: number[], visible: ChunkSpan, prefetch: ChunkSpan): void {
    for (const cc of channelChunks) {
      for (let tc = prefetch.first; tc <= prefetch.last; tc++) {
        if (tc >= visible.first && tc <= visible.last) continue;
        this.#o.store.chunk(this.#g.name, level, cc, tc).catch(() => undefined);
      }
    }
  }

  #publish(state: ViewerState): void {
    this.#o.root.dataset['ready'] = String(state.ready);
    this.#o.onState?.(state);
  }
}

/**
 * Reads column `i` of one channel from its loaded chunks: [v, v] at level 0, [min, max] at a view level.
 * The frame reads tens of thousands of columns, so it reuses one pair (the caller copies the values out).
 */
function columnReader(chunks: Array<DecodedChunk | undefined>, firstChunk: number, chunkColumns: number, level: number, c: number): ColumnReader {
  const pair: [number, number] = [0, 0];
  return (i) => {
    const chunk = chunks[Math.floor(i / chunkColumns) - firstChunk];
    if (!chunk) return undefined;
    const t = i % chunkColumns;
    if (level === 0) {
      pair[0] = pair[1] = chunk.data[c * chunk.stride[0]! + t * chunk.stride[1]!]!;
    } else {
      const at = c * chunk.stride[1]! + t * chunk.stride[2]!;
      pair[0] = chunk.data[at]!;
      pair[1] = chunk.data[chunk.stride[0]! + at]!;
    }
    return pair;
  };
}

function range(first: number, last: number): number[] {
  const out: number[] = [];
  for (let i = first; i <= last; i++) out.push(i);
  return out;
}
