import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { NDS_VERSION } from '../../src/core/release.js';

describe('the release nds names in its logs and refusals', () => {
  it('is the version of package.json', () => {
    assert.equal(NDS_VERSION, (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });
});
