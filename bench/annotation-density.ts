/**
 * The viewer's annotation step of a frame, in Node (issue 26): 100,000 annotations on a 64-channel, 1-hour
 * recording, as `bench/viewer.ts` imports them (a third for all channels, the rest on 1–4 channels, 0.2–2 s),
 * placed for windows of 1, 10 and 50 minutes, 20 each panned by a hundredth (densities: ~1,700 to ~84,000 in view),
 * 1,130 pixel columns, 64 rows. Baseline, in the same run: what the frame did before the index answered the
 * density — every annotation in view walked into difference arrays per row (kept here, as it was). Then an edit:
 * the index changed in place beside the index built again (what every edit and poll cost before).
 * Run: node --import tsx bench/annotation-density.ts [--annotations 100000] [--repeat 5]
 */
import { cpus } from 'node:os';
import { AnnotationIndex, type ViewerAnnotation } from '../src/web/viewer/annotation-index.js';
import { maxSpans, placeAnnotations, type AnnotationView } from '../src/web/viewer/annotation-marks.js';

/** The old placement's runs of covered columns per row (`row` null: the annotations for all channels). */
type Runs = Array<{ row: number | null; x0: number; x1: number }>;
import { option } from './bench-args.js';

const count = Number(option('annotations', '100000'));
const repeat = Number(option('repeat', '5'));
const labels = Array.from({ length: 64 }, (_, i) => `EEG${String(i + 1).padStart(3, '0')}`);
let seed = 26;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const all: ViewerAnnotation[] = Array.from({ length: count }, (_, i) => {
  const channels = i % 3 === 0 ? null : [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => labels[Math.floor(random() * labels.length)]!))];
  return {
    id: crypto.randomUUID(),
    onset: Number(((i / count) * 3590).toFixed(3)),
    duration: Number((0.2 + random() * 1.8).toFixed(3)),
    channels,
    label: ['spike', 'artefact', 'sleep-N2', 'arousal', 'seizure'][i % 5]!,
    hed: null,
    note: null,
    author: 'ada',
    created_at: '2026-11-27T00:00:00.000Z',
    updated_at: '2026-11-27T00:00:00.000Z',
  };
});

/** The baseline: the density as the frame computed it before (every annotation in view, its rows, a difference array per row). */
function walkedDensity(index: AnnotationIndex, view: AnnotationView): { inView: number; runs: Runs } {
  const from = view.startSeconds;
  const to = from + view.plotWidth * view.secondsPerPixel;
  const first = index.overlapping(from, to, maxSpans + 1);
  const inWindow = first.length > maxSpans ? index.overlapping(from, to) : first;
  const rowOf = new Map<string, number[]>();
  view.rowChannels.forEach((label, i) => rowOf.set(label, [...(rowOf.get(label) ?? []), i]));
  const xOf = (seconds: number) => Math.round(view.plotLeft + (seconds - from) / view.secondsPerPixel);
  const width = view.plotWidth;
  const rowCount = view.rowChannels.length;
  const diff = new Int32Array((rowCount + 1) * (width + 1));
  for (const a of inWindow) {
    const x0 = Math.max(0, xOf(a.onset) - view.plotLeft);
    const x1 = Math.min(width - 1, Math.max(x0, xOf(a.onset + a.duration) - view.plotLeft));
    if (x0 > width - 1) continue;
    if (a.channels === null) {
      diff[rowCount * (width + 1) + x0] += 1;
      diff[rowCount * (width + 1) + x1 + 1] -= 1;
      continue;
    }
    for (const c of a.channels) {
      for (const row of rowOf.get(c) ?? []) {
        diff[row * (width + 1) + x0] += 1;
        diff[row * (width + 1) + x1 + 1] -= 1;
      }
    }
  }
  const runs: Runs = [];
  for (let row = 0; row <= rowCount; row++) {
    let depth = 0;
    let start = -1;
    for (let x = 0; x <= width; x++) {
      depth += diff[row * (width + 1) + x]!;
      if (depth > 0 && start < 0) start = x;
      if ((depth <= 0 || x === width) && start >= 0) {
        runs.push({ row: row === rowCount ? null : row, x0: view.plotLeft + start, x1: view.plotLeft + x });
        start = -1;
      }
    }
  }
  return { inView: inWindow.length, runs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

const began = performance.now();
const index = new AnnotationIndex(all);
const buildMs = performance.now() - began;
const width = 1130;
const views = (seconds: number, pans: number): AnnotationView[] =>
  Array.from({ length: pans }, (_, i) => ({ startSeconds: Math.min(3590 - seconds, 600) + (i * seconds) / 100, secondsPerPixel: seconds / width, plotLeft: 150, plotWidth: width, rowChannels: labels }));

/**
 * CPU milliseconds of each call of `place` over `windows` (this process's user + system time: on a shared
 * machine the wall clock also counts the time the process waited for a core).
 */
function time(windows: AnnotationView[], place: (v: AnnotationView) => unknown): number[] {
  const out: number[] = [];
  for (const v of windows) {
    const t = process.cpuUsage();
    place(v);
    const used = process.cpuUsage(t);
    out.push((used.user + used.system) / 1000);
  }
  return out;
}

const rows: string[] = [];
for (const [name, seconds, pans] of [['64 rows × 10 min', 600, 20], ['64 rows × 1 min', 60, 20], ['64 rows × 50 min', 3000, 20]] as const) {
  const windows = views(seconds, pans);
  // Warm both up (the JIT), then alternate them.
  time(windows, (v) => walkedDensity(index, v));
  time(windows, (v) => placeAnnotations(index, v));
  const walked: number[] = [];
  const indexed: number[] = [];
  for (let r = 0; r < repeat; r++) {
    walked.push(...time(windows, (v) => walkedDensity(index, v)));
    indexed.push(...time(windows, (v) => placeAnnotations(index, v)));
  }
  const sample = placeAnnotations(index, windows[0]!);
  rows.push(`| ${name} | ${sample.inView} (${sample.mode}) | ${walked.length} | ${median(walked).toFixed(2)} / ${percentile(walked, 95).toFixed(2)} ms | **${median(indexed).toFixed(2)} / ${percentile(indexed, 95).toFixed(2)} ms** |`);
}

// An edit and a poll's change: the index changed in place, beside the index built again (the cost of each before).
const rebuilt: number[] = [];
const inPlace: number[] = [];
for (let i = 0; i < 20; i++) {
  const a = all[Math.floor(random() * all.length)]!;
  const moved = { ...a, onset: a.onset + 0.5 };
  let cpu = process.cpuUsage();
  index.update([moved]);
  let used = process.cpuUsage(cpu);
  inPlace.push((used.user + used.system) / 1000);
  all[all.indexOf(a)] = moved;
  cpu = process.cpuUsage();
  void new AnnotationIndex(all).size;
  used = process.cpuUsage(cpu);
  rebuilt.push((used.user + used.system) / 1000);
}

console.log(`Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; ${count.toLocaleString('en')} annotations, index built in ${buildMs.toFixed(0)} ms\n`);
console.log('CPU time of the annotation step per frame (process user + system time):\n');
console.log('| window | annotations in view | frames | baseline: walk every annotation in view (p50 / p95) | index (p50 / p95) |');
console.log('|---|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log(`\n| an edit (one annotation moved), CPU time | p50 | p95 |\n|---|---:|---:|`);
console.log(`| baseline: the index built again | ${median(rebuilt).toFixed(2)} ms | ${percentile(rebuilt, 95).toFixed(2)} ms |`);
console.log(`| changed in place | **${median(inPlace).toFixed(2)} ms** | **${percentile(inPlace, 95).toFixed(2)} ms** |`);
