import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentRange, parseSingleRange } from '../../src/objects/byte-range.js';

describe('Range decisions of the gateway', () => {
  it('reads bytes=a-b, a- and -n inside the object', () => {
    assert.deepEqual(parseSingleRange('bytes=0-9', 100), { start: 0, end: 9 });
    assert.deepEqual(parseSingleRange('bytes=90-', 100), { start: 90, end: 99 });
    assert.deepEqual(parseSingleRange('bytes=-10', 100), { start: 90, end: 99 });
    assert.deepEqual(parseSingleRange('bytes=-1000', 100), { start: 0, end: 99 });
    assert.deepEqual(parseSingleRange('bytes=50-5000', 100), { start: 50, end: 99 });
  });

  it('calls a start past the end, or an empty suffix, unsatisfiable', () => {
    assert.equal(parseSingleRange('bytes=100-', 100), 'unsatisfiable');
    assert.equal(parseSingleRange('bytes=100-200', 100), 'unsatisfiable');
    assert.equal(parseSingleRange('bytes=-0', 100), 'unsatisfiable');
    assert.equal(parseSingleRange('bytes=0-', 0), 'unsatisfiable');
  });

  it('ignores what it cannot serve as one range (the whole object is sent)', () => {
    for (const h of [undefined, '', 'bytes=', 'bytes=-', 'bytes=5-2', 'bytes=0-1,3-4', 'items=0-1', 'bytes=a-b']) {
      assert.equal(parseSingleRange(h, 100), null, String(h));
    }
  });

  it('formats Content-Range for 206 and 416', () => {
    assert.equal(contentRange(100, { start: 90, end: 99 }), 'bytes 90-99/100');
    assert.equal(contentRange(100), 'bytes */100');
  });
});
