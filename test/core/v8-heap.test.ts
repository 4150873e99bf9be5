import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasExternalMemoryLimitFlag } from '../../src/core/v8-heap.js';

describe('V8 heap settings', () => {
  // Setting a flag this V8 lacks prints "unrecognized flag" on the server's stderr: Node 22 must be left alone.
  it('counts external memory in the heap limit only on a V8 that has the flag (Node 24 on), not on Node 22', () => {
    assert.equal(hasExternalMemoryLimitFlag('12.4.254.21-node.57'), false);
    assert.equal(hasExternalMemoryLimitFlag('13.5.212.10'), false);
    assert.equal(hasExternalMemoryLimitFlag('13.6.233.17-node.31'), true);
    assert.equal(hasExternalMemoryLimitFlag('14.1.0'), true);
  });
});
