/** The viewer's pure decisions: level choice, covering chunks, column envelopes, window rules, Accept. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptQuality, prefersHtml } from '../../src/http/accept-preference.js';
import { columnEnvelope, envelopeRange } from '../../src/signals/column-envelope.js';
import { chooseLevel, chunksCovering, levelColumns, withPrefetch } from '../../src/web/viewer/level-choice.js';
import { LruCache } from '../../src/web/viewer/lru-cache.js';
import { placeEventLabels } from '../../src/signals/trace-layout.js';
import { clampWindow, minSpan, zoomAround } from '../../src/web/viewer/view-window.js';

describe('chooseLevel', () => {
  const base = { pixelWidth: 1000, viewLevels: 6, downsample: 4 };
  it('draws samples while the window holds at most two a pixel', () => {
    assert.equal(chooseLevel({ ...base, windowSamples: 2000 }), 0);
    assert.equal(chooseLevel({ ...base, windowSamples: 10 }), 0);
  });
  it('stays at level 0 when level 1 would have fewer columns than pixels', () => {
    assert.equal(chooseLevel({ ...base, windowSamples: 3999 }), 0);
  });
  it('picks the coarsest level that still has a column a pixel', () => {
    assert.equal(chooseLevel({ ...base, windowSamples: 4000 }), 1);
    assert.equal(chooseLevel({ ...base, windowSamples: 15999 }), 1);
    assert.equal(chooseLevel({ ...base, windowSamples: 16000 }), 2);
    assert.equal(chooseLevel({ ...base, windowSamples: 921600 }), 4);
  });
  it('never asks for a level the store does not have', () => {
    assert.equal(chooseLevel({ ...base, viewLevels: 2, windowSamples: 1e9 }), 2);
    assert.equal(chooseLevel({ ...base, viewLevels: 0, windowSamples: 1e9 }), 0);
  });
});

describe('chunksCovering', () => {
  it('covers exactly the chunks holding the window, at the level\'s column scale', () => {
    assert.deepEqual(chunksCovering({ start: 0, end: 2560, level: 0, downsample: 4, chunkColumns: 1024, levelColumns: 153600 }), { first: 0, last: 2 });
    assert.deepEqual(chunksCovering({ start: 1024, end: 2048, level: 0, downsample: 4, chunkColumns: 1024, levelColumns: 153600 }), { first: 1, last: 1 });
    assert.deepEqual(chunksCovering({ start: 0, end: 153600, level: 3, downsample: 4, chunkColumns: 1024, levelColumns: 2400 }), { first: 0, last: 2 });
  });
  it('clips at the recording\'s end', () => {
    assert.deepEqual(chunksCovering({ start: 150000, end: 160000, level: 0, downsample: 4, chunkColumns: 1024, levelColumns: 153600 }), { first: 146, last: 149 });
  });
  it('adds one chunk of prefetch each side inside the level', () => {
    assert.deepEqual(withPrefetch({ first: 0, last: 2 }, 1, 150), { first: 0, last: 3 });
    assert.deepEqual(withPrefetch({ first: 146, last: 149 }, 1, 150), { first: 145, last: 149 });
  });
  it('counts a level\'s columns as ceil(n / 4^L)', () => {
    assert.equal(levelColumns(7900, 1, 4), 1975);
    assert.equal(levelColumns(7900, 2, 4), 494);
  });
});

describe('columnEnvelope', () => {
  const samples = [0, 10, -10, 5, 5, 5, 100, -100];
  const read = (i: number) => (i < samples.length ? ([samples[i]!, samples[i]!] as const) : undefined);
  it('gives each pixel the min and max of the samples it overlaps, in physical units', () => {
    const e = columnEnvelope({ start: 0, samplesPerPixel: 2, pixelWidth: 4, factor: 1, levelColumns: 8, scale: 0.5, offset: 1, read });
    assert.deepEqual([...e.lo], [1, -4, 3.5, -49]);
    assert.deepEqual([...e.hi], [6, 3.5, 3.5, 51]);
    assert.deepEqual(envelopeRange(e), [-49, 51]);
  });
  it('repeats a sample across the pixels of a deep zoom', () => {
    const e = columnEnvelope({ start: 0, samplesPerPixel: 0.5, pixelWidth: 4, factor: 1, levelColumns: 8, scale: 1, offset: 0, read });
    // Two pixels a sample; the step up from 0 to 10 is joined by a vertical stroke in the first pixel of 10.
    assert.deepEqual([...e.lo], [0, 0, 0, 10]);
    assert.deepEqual([...e.hi], [0, 0, 10, 10]);
  });
  it('leaves columns whose chunk is missing or outside the recording undrawn', () => {
    const e = columnEnvelope({ start: 6, samplesPerPixel: 1, pixelWidth: 4, factor: 1, levelColumns: 8, scale: 1, offset: 0, read });
    assert.ok(Number.isNaN(e.lo[2]!) && Number.isNaN(e.lo[3]!));
    assert.equal(e.hi[0], 100);
  });
  it('swaps min and max for a negative scale', () => {
    const e = columnEnvelope({ start: 0, samplesPerPixel: 2, pixelWidth: 1, factor: 1, levelColumns: 8, scale: -1, offset: 0, read });
    assert.deepEqual([e.lo[0], e.hi[0]], [-10, 0]);
  });
});

describe('view window', () => {
  it('keeps the window inside the recording and at least a few samples wide', () => {
    assert.deepEqual(clampWindow({ start: -5, span: 2 }, 1000), { start: 0, span: minSpan });
    assert.deepEqual(clampWindow({ start: 990, span: 100 }, 1000), { start: 900, span: 100 });
    assert.deepEqual(clampWindow({ start: 10, span: 5000 }, 1000), { start: 0, span: 1000 });
  });
  it('zooms around the anchor so the sample under the cursor stays put', () => {
    const w = zoomAround({ start: 100, span: 400 }, 0.5, 0.25, 10000);
    assert.equal(w.start + 0.25 * w.span, 200);
    assert.equal(w.span, 200);
  });
});

describe('LruCache', () => {
  it('drops the least recently used entry past its limit', () => {
    const lru = new LruCache<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('a');
    lru.set('c', 3);
    assert.equal(lru.has('b'), false);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.size, 2);
  });
});

describe('prefersHtml', () => {
  it('sends browsers to the pages and API clients to JSON', () => {
    assert.equal(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8'), true);
    assert.equal(prefersHtml('*/*'), false);
    assert.equal(prefersHtml('application/json'), false);
    assert.equal(prefersHtml(undefined), false);
    assert.equal(prefersHtml('application/json, text/html;q=0.5'), false);
    assert.equal(prefersHtml('text/html;q=0.9, application/json;q=0.9'), false);
  });
  it('takes the most specific range\'s q-value', () => {
    assert.equal(acceptQuality('text/*;q=0.3, text/html;q=0.7, */*;q=0.1', 'text/html'), 0.7);
    assert.equal(acceptQuality('text/*;q=0.3, */*;q=0.1', 'text/html'), 0.3);
    assert.equal(acceptQuality('image/png', 'text/html'), 0);
  });
});

describe('placeEventLabels', () => {
  const measure = (text: string) => 6 * text.length;
  it('leaves out a label that has no room before the next marker, and keeps the others whole', () => {
    const placed = placeEventLabels([{ x: 300, label: 'type B' }, { x: 100, label: 'start' }, { x: 110, label: 'type A' }], 1000, measure);
    assert.deepEqual(placed, [{ x: 113, text: 'type A' }, { x: 303, text: 'type B' }]);
  });
  it('shortens a label to the room up to the next marker, with an ellipsis', () => {
    const [first] = placeEventLabels([{ x: 0, label: 'a very long label indeed' }, { x: 60, label: 'b' }], 1000, measure);
    assert.equal(first.text, 'a very l…');
    assert.ok(measure(first.text) <= 54);
  });
  it('stops at the plot edge and never lets two labels overlap', () => {
    assert.deepEqual(placeEventLabels([{ x: 990, label: 'late' }], 1000, measure), []);
    // Every 30 px, with labels of 42–48 px and a cluster of markers 2 px apart.
    const markers = Array.from({ length: 30 }, (_, i) => ({ x: 30 * i, label: `event ${i}` }));
    markers.push(...[1, 3, 5].map((x) => ({ x: 900 + x, label: 'burst' })));
    const placed = placeEventLabels(markers, 1000, measure);
    assert.ok(placed.length >= 25, `${placed.length} placed`);
    for (let i = 1; i < placed.length; i++) assert.ok(placed[i].x >= placed[i - 1].x + measure(placed[i - 1].text), `label ${i} overlaps`);
  });
});
