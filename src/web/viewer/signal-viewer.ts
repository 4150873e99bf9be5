/**
 * The viewer: keeps the window and channel page, fetches exactly the chunks that cover it (then one more
 * each side as prefetch), and redraws. Its state is mirrored on `window.ndsViewer` and readiness on the
 * root element's `data-ready`, for people debugging and for the browser tests.
 */
import { columnEnvelope, envelopeRange, type ColumnEnvelope } from './column-envelope.js';
import { drawFrame } from './draw-traces.js';
import { chooseLevel, chunksCovering, levelColumns, withPrefetch, type ChunkSpan } from './level-choice.js';
import type { DecodedChunk, EventMarker, GroupMeta, RecordingStore } from './recording-store.js';
import { traceLayout } from './trace-layout.js';
import { clampWindow, type ViewWindow } from './view-window.js';

export interface ViewerState {
  ready: boolean;
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
  events: EventMarker[];
  pageSize?: number;
  /** Initial window in seconds (default 10 s, or the whole recording when shorter). */
  initialSeconds?: number;
  onState?: (state: ViewerState) => void;
}

export class SignalViewer {
  readonly #o: SignalViewerOptions;
  readonly #g: GroupMeta;
  #window: ViewWindow;
  #channelFirst = 0;
  #gain = 1;
  #generation = 0;
  #renders = 0;
  readonly pageSize: number;

  constructor(options: SignalViewerOptions) {
    this.#o = options;
    this.#g = options.group;
    this.pageSize = options.pageSize ?? 16;
    const seconds = options.initialSeconds ?? 10;
    this.#window = clampWindow({ start: 0, span: Math.round(seconds * this.#g.rate) }, this.#g.nSamples);
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
      const chunks = new Map<string, DecodedChunk>();
      let complete = true;
      for (const [cc, tc] of wanted) {
        const chunk = this.#o.store.cached(g.name, level, cc, tc);
        if (chunk) chunks.set(`${cc}/${tc}`, chunk);
        else complete = false;
      }
      const envelopes: ColumnEnvelope[] = [];
      const ranges: Array<[number, number]> = [];
      for (let row = 0; row < channelCount; row++) {
        const channel = channelFirst + row;
        const cc = Math.floor(channel / channelsPerChunk);
        const c = channel % channelsPerChunk;
        const meta = g.channels[channel]!;
        const envelope = columnEnvelope({
          start: w.start,
          samplesPerPixel: w.span / layout.plotWidth,
          pixelWidth: layout.plotWidth,
          factor: g.downsample ** level,
          levelColumns: columns,
          scale: meta.scale,
          offset: meta.offset,
          read: (i) => {
            const chunk = chunks.get(`${cc}/${Math.floor(i / chunkColumns)}`);
            if (!chunk) return undefined;
            const t = i % chunkColumns;
            if (level === 0) {
              const v = chunk.data[c * chunk.stride[0]! + t * chunk.stride[1]!]!;
              return [v, v];
            }
            const at = c * chunk.stride[1]! + t * chunk.stride[2]!;
            return [chunk.data[at]!, chunk.data[chunk.stride[0]! + at]!];
          },
        });
        envelopes.push(envelope);
        ranges.push(envelopeRange(envelope) ?? [0, 0]);
      }
      const ctx = this.#o.canvas.getContext('2d')!;
      drawFrame(ctx, {
        layout,
        startSeconds: w.start / g.rate,
        secondsPerPixel: w.span / layout.plotWidth / g.rate,
        channels: g.channels.slice(channelFirst, channelFirst + channelCount),
        envelopes,
        ranges,
        gain: this.#gain,
        events: this.#o.events,
      });
      this.#renders++;
      this.#publish({
        ready: complete,
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

    if (frame()) return this.#prefetch(level, channelChunks, visible, prefetch);
    await Promise.all(wanted.map(([cc, tc]) => this.#o.store.chunk(g.name, level, cc, tc)));
    if (generation !== this.#generation) return;
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

function range(first: number, last: number): number[] {
  const out: number[] = [];
  for (let i = first; i <= last; i++) out.push(i);
  return out;
}
