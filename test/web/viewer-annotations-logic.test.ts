/**
 * The annotation mode's pure parts: the index answers exactly what a scan of every annotation answers (long
 * spans included); the density's covered columns from the index equal those of a walk over every annotation in
 * view, at every zoom and after edits applied in place; a frame places spans on their rows and turns to a
 * density past `maxSpans`, keeping each span's rows while the page's rows stay; the spans' bitmap equals the
 * canvas' own compositing of the bands and edges, colour by colour; the pointer's
 * hit test; and the client copy's conflict rule against a scripted server: an edit of an annotation someone
 * else changed is a conflict, an edit after someone else's change elsewhere is sent again on the new revision.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_CHANNELS, AnnotationIndex, type ViewerAnnotation } from '../../src/web/viewer/annotation-index.js';
import { maxSpans, placeAnnotations, type DensityColumns } from '../../src/web/viewer/annotation-marks.js';
import { hitAnnotation, secondsAt } from '../../src/web/viewer/annotation-pointer.js';
import { bandAlpha, edgeAlpha, spanBitmap } from '../../src/web/viewer/span-bitmap.js';
import type { DrawnAnnotation } from '../../src/web/viewer/annotation-marks.js';
import { AnnotationSync } from '../../src/web/viewer/annotation-sync.js';

let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

function annotation(id: number, onset: number, duration: number, channels: string[] | null = null, label = 'seizure'): ViewerAnnotation {
  return { id: `a${String(id).padStart(6, '0')}`, onset, duration, channels, label, hed: null, note: null, author: 'ada', created_at: '2026-11-27T00:00:00.000Z', updated_at: '2026-11-27T00:00:00.000Z' };
}

describe('AnnotationIndex', () => {
  it('finds exactly the annotations overlapping a window, by onset, with a few long spans among many short ones', () => {
    const all = Array.from({ length: 20_000 }, (_, i) => annotation(i, random() * 3600, random() < 0.001 ? random() * 1800 : random() * 5));
    all.push(annotation(99_999, 0, 3600));
    const index = new AnnotationIndex(all);
    for (let q = 0; q < 200; q++) {
      const from = random() * 3700 - 50;
      const to = from + random() * (q % 10 === 0 ? 600 : 10);
      const expected = all.filter((a) => a.onset < to && a.onset + a.duration >= from).sort((a, b) => a.onset - b.onset || (a.id < b.id ? -1 : 1));
      assert.deepEqual(index.overlapping(from, to).map((a) => a.id), expected.map((a) => a.id));
      assert.equal(index.count(from, to), expected.length);
    }
  });

  it('answers a 10 s window of 100,000 annotations in well under a millisecond', () => {
    const index = new AnnotationIndex(Array.from({ length: 100_000 }, (_, i) => annotation(i, (i / 100_000) * 3600, 1)));
    const began = performance.now();
    let found = 0;
    for (let i = 0; i < 1000; i++) found += index.overlapping(i * 3, i * 3 + 10).length;
    const perQuery = (performance.now() - began) / 1000;
    assert.ok(found > 0);
    assert.ok(perQuery < 1, `${perQuery} ms a query`);
  });
});

/** The covered columns of each row as the frame drew them before the index answered them: every annotation in the window walked, its rounded columns marked. */
function coveredByWalking(all: ViewerAnnotation[], view: { startSeconds: number; secondsPerPixel: number; plotWidth: number; rowChannels: string[] }): Map<number | null, Set<number>> {
  const out = new Map<number | null, Set<number>>();
  const to = view.startSeconds + view.plotWidth * view.secondsPerPixel;
  const col = (t: number) => Math.round((t - view.startSeconds) / view.secondsPerPixel);
  for (const a of all) {
    if (!(a.onset < to && a.onset + a.duration >= view.startSeconds)) continue;
    const x0 = Math.max(0, col(a.onset));
    const x1 = Math.min(view.plotWidth - 1, col(a.onset + a.duration));
    if (x0 > view.plotWidth - 1) continue;
    const rows = a.channels === null ? [null] : view.rowChannels.flatMap((label, i) => (a.channels!.includes(label) ? [i] : []));
    for (const row of rows) {
      if (!out.has(row)) out.set(row, new Set());
      for (let x = x0; x <= x1; x++) out.get(row)!.add(x);
    }
  }
  return out;
}

/** The covered columns of each row (null: the annotations for all channels) from a placement's density. */
function coveredByRuns(density: DensityColumns | undefined): Map<number | null, Set<number>> {
  const out = new Map<number | null, Set<number>>();
  if (!density) return out;
  for (let row = 0; row <= density.rows; row++) {
    for (let x = 0; x < density.width; x++) {
      if (density.covered[row * density.width + x] !== 1) continue;
      const key = row === density.rows ? null : row;
      if (!out.has(key)) out.set(key, new Set());
      out.get(key)!.add(x);
    }
  }
  return out;
}

const sortedEntries = (m: Map<number | null, Set<number>>) => [...m].map(([row, xs]) => [row, [...xs].sort((a, b) => a - b)] as const).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

describe('the density from the index', () => {
  const labels = ['Fp1', 'Fp2', 'F3', 'F4', 'C3', 'C4', 'O1', 'O2'];
  const many = (n: number, seconds: number) =>
    Array.from({ length: n }, (_, i) => {
      const channels = i % 3 === 0 ? null : Array.from({ length: 1 + Math.floor(random() * 3) }, () => labels[Math.floor(random() * labels.length)]!);
      // Mostly short, some instants, a few long spans across many columns.
      const duration = random() < 0.05 ? 0 : random() < 0.01 ? random() * seconds * 0.3 : 0.2 + random() * 1.8;
      return annotation(i, random() * seconds, duration, channels);
    });

  it('covers exactly the columns the walk over every annotation in view covers, on every row, at any zoom', () => {
    const all = many(20_000, 3600);
    const index = new AnnotationIndex(all);
    // Two rows of one channel (a montage may repeat it) and a row of a channel with no annotations.
    const rowChannels = [...labels, 'Fp1', 'EOG'];
    const columns = new Uint8Array(1000);
    let densities = 0;
    for (let q = 0; q < 40; q++) {
      const seconds = [10, 60, 600, 3600][q % 4]!;
      const view = { startSeconds: random() * 3700 - 100, secondsPerPixel: seconds / 1000, plotLeft: 120, plotWidth: 1000, rowChannels };
      const walked = coveredByWalking(all, view);
      // The index's coverage of each channel, at every zoom (spans or not).
      for (const [track, row] of [[ALL_CHANNELS, null], ...labels.map((l, i) => [l, i] as const), ['EOG', 9]] as const) {
        index.coverage(track, view.startSeconds, view.secondsPerPixel, 1000, columns);
        const covered = [...columns.keys()].filter((x) => columns[x] === 1);
        assert.deepEqual(covered, [...(walked.get(row) ?? [])].sort((a, b) => a - b), `${track} in ${view.startSeconds} + ${seconds} s`);
      }
      const placed = placeAnnotations(index, view);
      assert.equal(placed.inView, all.filter((a) => a.onset < view.startSeconds + seconds && a.onset + a.duration >= view.startSeconds).length);
      if (placed.mode !== 'density') continue;
      densities++;
      assert.deepEqual(sortedEntries(coveredByRuns(placed.density)), sortedEntries(walked), `window ${view.startSeconds} + ${seconds} s`);
    }
    assert.ok(densities >= 10, `${densities} windows drawn as a density`);
  });

  it('answers the same after edits applied in place as an index built afresh from the result', () => {
    const all = new Map(many(3000, 600).map((a) => [a.id, a]));
    const index = new AnnotationIndex(all.values());
    let next = 100_000;
    for (let round = 0; round < 60; round++) {
      const ids = [...all.keys()];
      const removed = Array.from({ length: round % 4 }, () => ids[Math.floor(random() * ids.length)]!);
      const moved = Array.from({ length: round % 3 }, () => {
        const a = all.get(ids[Math.floor(random() * ids.length)]!)!;
        return { ...a, onset: random() * 590, channels: random() < 0.5 ? null : ['C3'] };
      });
      const made = Array.from({ length: round % 5 }, () => annotation(next++, random() * 590, random() * 3, random() < 0.5 ? null : ['O1', 'O2']));
      for (const id of removed) all.delete(id);
      for (const a of [...moved, ...made]) if (!removed.includes(a.id)) all.set(a.id, a);
      index.update([...moved, ...made].filter((a) => !removed.includes(a.id)), removed);
      const fresh = new AnnotationIndex(all.values());
      assert.equal(index.size, all.size);
      for (let q = 0; q < 5; q++) {
        const from = random() * 600;
        const to = from + random() * 120;
        assert.deepEqual(index.overlapping(from, to).map((a) => a.id), fresh.overlapping(from, to).map((a) => a.id));
        assert.equal(index.count(from, to), fresh.count(from, to));
        const view = { startSeconds: from, secondsPerPixel: (to - from) / 500, plotLeft: 0, plotWidth: 500, rowChannels: labels };
        // One buffer serves every frame: read the first before placing the second.
        const covered = sortedEntries(coveredByRuns(placeAnnotations(index, view).density));
        const b = placeAnnotations(fresh, view);
        assert.deepEqual(covered, sortedEntries(coveredByRuns(b.density)));
        // Each channel's coverage, whether the window is drawn as spans or as a density.
        const ours = new Uint8Array(500);
        const theirs = new Uint8Array(500);
        for (const track of [ALL_CHANNELS, ...labels]) {
          index.coverage(track, from, (to - from) / 500, 500, ours);
          fresh.coverage(track, from, (to - from) / 500, 500, theirs);
          assert.deepEqual(ours, theirs, track);
        }
      }
    }
    // A batch over a tenth of them is built again, with the same answers.
    const ids = [...all.keys()].slice(0, 1000);
    index.update([], ids);
    for (const id of ids) all.delete(id);
    assert.deepEqual(index.all.map((a) => a.id), new AnnotationIndex(all.values()).all.map((a) => a.id));
  });
});

describe('placeAnnotations', () => {
  const view = { startSeconds: 10, secondsPerPixel: 0.01, plotLeft: 120, plotWidth: 1000, rowChannels: ['Fp1', 'Fp2', 'F3', 'F4'] };

  it('places each span at its pixel columns on the rows of its channels, or every row', () => {
    const index = new AnnotationIndex([annotation(1, 12, 2.5, ['Fp2', 'F4', 'Oz']), annotation(2, 15, 0), annotation(3, 30, 1)]);
    const placed = placeAnnotations(index, view, { selected: 'a000002' });
    assert.equal(placed.mode, 'spans');
    assert.equal(placed.total, 3);
    assert.equal(placed.inView, 2);
    assert.deepEqual(placed.spans.map((a) => [a.id, a.x0, a.x1, a.rows, a.selected ?? false]), [
      ['a000001', 320, 570, [1, 3], false],
      ['a000002', 620, 620, [0, 1, 2, 3], true],
    ]);
  });

  it('draws a draft in place of the annotation it edits', () => {
    const index = new AnnotationIndex([annotation(1, 12, 2)]);
    const placed = placeAnnotations(index, view, { draft: { id: 'a000001', onset: 12, duration: 3, channels: null, label: 'seizure' } });
    assert.deepEqual(placed.spans.map((a) => [a.id, a.x1, a.draft ?? false]), [['a000001', 620, true]]);
  });

  it("keeps an annotation's rows from frame to frame while the page shows the same rows, and finds them again when they change", () => {
    const index = new AnnotationIndex([annotation(1, 12, 2.5, ['Fp2', 'F4'])]);
    const rows = placeAnnotations(index, view).spans[0]!.rows;
    assert.deepEqual(rows, [1, 3]);
    // A pan: the same rows, not computed again.
    assert.equal(placeAnnotations(index, { ...view, startSeconds: 11 }).spans[0]!.rows, rows);
    // Other rows on the page: computed for them.
    assert.deepEqual(placeAnnotations(index, { ...view, rowChannels: ['F4', 'Fp2', 'F3', 'Fp1'] }).spans[0]!.rows, [1, 0]);
    // An edit makes a new annotation, placed on its new channels.
    index.update([annotation(1, 12, 2.5, ['F3'])]);
    assert.deepEqual(placeAnnotations(index, view).spans[0]!.rows, [2]);
  });

  it(`past ${maxSpans} in the window, draws covered columns per row instead of spans`, () => {
    const many = Array.from({ length: maxSpans + 1 }, (_, i) => annotation(i, 10 + i * 0.005, 0.002, i % 2 ? ['F3'] : null));
    const placed = placeAnnotations(new AnnotationIndex(many), view);
    assert.equal(placed.mode, 'density');
    assert.deepEqual(placed.spans, []);
    const covered = coveredByRuns(placed.density);
    assert.deepEqual([...covered.keys()].sort(), [2, null].sort());
    assert.ok([...covered.values()].every((xs) => [...xs].every((x) => x >= 0 && x < view.plotWidth)));
  });
});

describe('the annotation pointer', () => {
  const frame = { start: 2560, end: 5120, rate: 256, nSamples: 15_360, channelCount: 4, plot: { left: 120, top: 18, width: 1000, height: 400, rowHeight: 100 } };

  it('maps a device column to a time on a sample', () => {
    assert.equal(secondsAt(frame, 120), 10);
    assert.equal(secondsAt(frame, 620), 15);
    assert.equal(secondsAt(frame, 121), Math.round(2560 + 2.56) / 256);
    assert.equal(secondsAt(frame, 5000), 20);
  });

  it('finds an edge before an inside, and only on the rows an annotation covers', () => {
    const drawn = placeAnnotations(new AnnotationIndex([annotation(1, 12, 2.5, ['Fp2'])]), { startSeconds: 10, secondsPerPixel: 0.01, plotLeft: 120, plotWidth: 1000, rowChannels: ['Fp1', 'Fp2', 'F3', 'F4'] }).spans;
    assert.equal(hitAnnotation(drawn, frame, 572, 150)?.part, 'end');
    assert.equal(hitAnnotation(drawn, frame, 318, 150)?.part, 'start');
    assert.equal(hitAnnotation(drawn, frame, 450, 150)?.part, 'inside');
    assert.equal(hitAnnotation(drawn, frame, 450, 50), undefined);
  });
});

/** A scripted annotations server: its state, revisions and history, and a log of the requests. */
function fakeServer(initial: ViewerAnnotation[]) {
  const rows = new Map(initial.map((a) => [a.id, a]));
  let revision = 1;
  const changes: Array<{ revision: number; annotation_id: string; action: string; after: unknown; author: string; changed_at: string }> = [];
  const log: string[] = [];
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  return {
    log,
    rows,
    /** Someone else's change, as the API would make it. */
    change(id: string, patch: Partial<ViewerAnnotation>, author = 'grace') {
      revision++;
      const next = { ...rows.get(id)!, ...patch };
      rows.set(id, next);
      const { id: _id, author: _a, created_at: _c, updated_at: _u, ...after } = next;
      changes.push({ revision, annotation_id: id, action: 'update', after, author, changed_at: '2026-11-27T01:00:00.000Z' });
    },
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input), 'http://nds.test');
      const method = init?.method ?? 'GET';
      log.push(`${method} ${url.pathname}${url.searchParams.has('after') ? `?after=${url.searchParams.get('after')}` : ''} ${new Headers(init?.headers).get('if-match') ?? ''}`.trim());
      if (method === 'GET' && url.pathname.endsWith('/labels')) return json(200, { labels: [{ label: 'tremor', count: 3, recordings: 2 }, { label: 'seizure', count: 1, recordings: 1 }] });
      if (method === 'GET' && url.pathname.endsWith('/history')) {
        const after = Number(url.searchParams.get('after'));
        return json(200, { changes: changes.filter((c) => c.revision > after), revision });
      }
      if (method === 'GET') return json(200, { annotations: [...rows.values()], revision });
      const match = new Headers(init?.headers).get('if-match');
      if (match && match !== `"${revision}"`) return json(409, { error: 'revision_conflict', message: 'moved', details: [] });
      const id = url.pathname.split('/').pop()!;
      if (method === 'PATCH') {
        revision++;
        const next = { ...rows.get(id)!, ...(JSON.parse(String(init!.body)) as Partial<ViewerAnnotation>) };
        rows.set(id, next);
        return json(200, { annotation: next, revision });
      }
      throw new Error(`unexpected ${method}`);
    }) as typeof fetch,
  };
}

describe('AnnotationSync', () => {
  const open = async (server: ReturnType<typeof fakeServer>) => {
    const sync = new AnnotationSync({ url: '/datasets/nd000001/annotations', path: 'sub-01/eeg/x_eeg.edf', pollMs: 60_000, onChange: () => undefined, fetch: server.fetch });
    await sync.start();
    sync.stop();
    return sync;
  };

  it('sends an edit again on the new revision when someone else changed another annotation meanwhile', async () => {
    const server = fakeServer([annotation(1, 1, 1), annotation(2, 5, 1)]);
    const sync = await open(server);
    const base = sync.get('a000001')!;
    server.change('a000002', { label: 'artefact' });
    const answer = await sync.update(base, { label: 'spike' });
    assert.equal(answer.conflict, false);
    assert.equal(server.rows.get('a000001')!.label, 'spike');
    assert.equal(sync.get('a000002')!.label, 'artefact');
    assert.deepEqual(server.log.slice(1), ['PATCH /datasets/nd000001/annotations/a000001 "1"', 'GET /datasets/nd000001/annotations/history?after=1', 'PATCH /datasets/nd000001/annotations/a000001 "2"']);
  });

  it('refuses an edit of an annotation someone else changed meanwhile, with their version and name, and sends nothing over it', async () => {
    const server = fakeServer([annotation(1, 1, 1)]);
    const sync = await open(server);
    const base = sync.get('a000001')!;
    server.change('a000001', { label: 'k-complex' });
    const answer = await sync.update(base, { label: 'spike' });
    assert.equal(answer.conflict, true);
    assert.equal(answer.conflict && answer.current?.label, 'k-complex');
    assert.equal(answer.conflict && answer.by, 'grace');
    assert.equal(server.rows.get('a000001')!.label, 'k-complex');
    assert.equal(server.log.filter((l) => l.startsWith('PATCH')).length, 1);
  });

  it('asks only for the changes after its revision, and keeps the author of an annotation someone else edited', async () => {
    const server = fakeServer([annotation(1, 1, 1)]);
    let changes = 0;
    const sync = new AnnotationSync({ url: '/a', path: 'p', pollMs: 60_000, onChange: () => changes++, fetch: server.fetch });
    await sync.start();
    sync.stop();
    await sync.catchUp();
    assert.equal(changes, 1, 'no news, no new index');
    server.change('a000001', { label: 'muscle' });
    await sync.catchUp();
    assert.equal(changes, 2);
    assert.equal(sync.get('a000001')!.label, 'muscle');
    assert.equal(sync.get('a000001')!.author, 'ada');
    assert.equal(sync.revision, 2);
    assert.deepEqual(server.log, ['GET /a', 'GET /a/history?after=1', 'GET /a/history?after=1']);
  });

  it("reads the dataset's labels once when asked, and keeps them for the form", async () => {
    const server = fakeServer([annotation(1, 1, 1)]);
    const sync = await open(server);
    assert.deepEqual(sync.knownDatasetLabels, []);
    assert.deepEqual(await sync.datasetLabels(), ['tremor', 'seizure']);
    assert.deepEqual(await sync.datasetLabels(), ['tremor', 'seizure']);
    assert.deepEqual(sync.knownDatasetLabels, ['tremor', 'seizure']);
    assert.equal(server.log.filter((l) => l.includes('/labels')).length, 1, 'read again only once they are 30 s old');
  });
});

describe('the spans as one bitmap', () => {
  /** What canvas paths draw, pixel by pixel: colour by colour in order of first appearance, the union of its bands, then of its edges, source-over. */
  function painted(spans: DrawnAnnotation[], plotLeft: number, width: number, rows: number): Array<[number, number, number, number]> {
    const colours = [...new Set(spans.map((a) => a.colour))];
    const out: Array<[number, number, number, number]> = [];
    for (let row = 0; row < rows; row++) {
      for (let x = 0; x < width; x++) {
        let [r, g, b, a] = [0, 0, 0, 0];
        const over = (hex: string, alpha: number) => {
          const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
          [r, g, b, a] = [c[0]! * alpha + r * (1 - alpha), c[1]! * alpha + g * (1 - alpha), c[2]! * alpha + b * (1 - alpha), alpha + a * (1 - alpha)];
        };
        for (const colour of colours) {
          const mine = spans.filter((s) => s.colour === colour && (s.channels === null || s.rows.includes(row)));
          const column = plotLeft + x;
          if (mine.some((s) => column >= s.x0 && column < s.x0 + Math.max(2, s.x1 - s.x0))) over(colour, bandAlpha);
          if (mine.some((s) => column === s.x0 || column === s.x0 + Math.max(2, s.x1 - s.x0) - 1)) over(colour, edgeAlpha);
        }
        out.push(a === 0 ? [0, 0, 0, 0] : [r / a, g / a, b / a, a * 255]);
      }
    }
    return out;
  }

  it("equals the canvas' compositing of every band and edge, on rows and for all channels, spans running off either side", () => {
    const colours = ['#8e24aa', '#2e7d32', '#1565c0'];
    const [plotLeft, width, rows] = [120, 90, 5];
    const spans: DrawnAnnotation[] = Array.from({ length: 40 }, (_, i) => {
      const x0 = plotLeft - 10 + Math.floor(random() * (width + 10));
      const all = i % 4 === 0;
      const onRows = [...new Set([Math.floor(random() * (rows + 1)), Math.floor(random() * rows)])];
      return { id: `s${i}`, onset: 0, duration: 0, channels: all ? null : ['x'], label: '', author: null, x0, x1: x0 + Math.floor(random() * 30), rows: all ? [0, 1, 2, 3, 4] : onRows, colour: colours[i % 3]! };
    });
    const bitmap = spanBitmap(spans, plotLeft, width, rows);
    const expected = painted(spans, plotLeft, width, rows);
    assert.equal(bitmap.pixels.length, width * rows);
    let tinted = 0;
    for (let i = 0; i < expected.length; i++) {
      const word = bitmap.pixels[i]!;
      const got = [word & 255, (word >>> 8) & 255, (word >>> 16) & 255, word >>> 24];
      const want = expected[i]!;
      if (want[3] > 0) tinted++;
      // Straight RGBA bytes: within one step of rounding (a colour is undefined where nothing is drawn).
      assert.ok(Math.abs(got[3]! - want[3]) <= 1 && (want[3] === 0 || got.slice(0, 3).every((v, k) => Math.abs(v - want[k]!) <= 1)), `pixel ${i % width}, row ${Math.floor(i / width)}: ${got} for ${want.map((v) => v.toFixed(1))}`);
    }
    assert.ok(tinted > width && tinted < width * rows, `${tinted} pixels tinted`);
  });
});
