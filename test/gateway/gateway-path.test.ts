import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayRelativePath, isMetadataPath, parseObjectPath } from '../../src/gateway/gateway-path.js';

describe('gateway paths', () => {
  it('names the object key of a dataset path, decoding each segment', () => {
    const v = parseObjectPath('/nd000001/zarr/sub-01/eeg/a%20b.zarr/zarr.json');
    assert.deepEqual(v, { ok: true, object: { datasetId: 'nd000001', path: 'sub-01/eeg/a b.zarr/zarr.json', key: 'nd000001/zarr/sub-01/eeg/a b.zarr/zarr.json' } });
  });

  it('refuses traversal and odd segments, raw or percent-encoded, with 400', () => {
    for (const p of [
      '/nd000001/zarr/../nd000002/zarr/index.json',
      '/nd000001/zarr/a/./zarr.json',
      '/nd000001/zarr/a//zarr.json',
      '/nd000001/zarr/',
      '/nd000001/zarr',
      '/nd000001/zarr/a\\b',
      '/nd000001/zarr/a%5Cb',
      '/nd000001/zarr/a%00b',
      '/nd000001/zarr/a\0b',
      '/nd000001/zarr/%2e%2e/x',
      '/nd000001/zarr/%2E%2E/x',
      '/nd000001/zarr/%2e/x',
      '/nd000001/zarr/a%2f..%2fb',
      '/nd000001/zarr/%zz',
      '/ND000001/zarr/index.json',
      '/nd00001/zarr/index.json',
      '/nd0000011/zarr/index.json',
      '/../etc/passwd',
      'nd000001/zarr/index.json',
    ]) {
      const v = parseObjectPath(p);
      assert.equal(v.ok, false, p);
      assert.equal(!v.ok && v.status, 400, p);
    }
  });

  it('answers 404 for a well-formed path outside the Zarr copy', () => {
    const v = parseObjectPath('/nd000001/objects/abc');
    assert.equal(!v.ok && v.status, 404);
  });

  it('accepts sandbox dataset ids', () => {
    assert.equal(parseObjectPath('/sb123456/zarr/index.json').ok, true);
  });

  it('strips /zarrproxy or the base path of ZARR_CACHE_BASE_URL, and the query', () => {
    assert.equal(gatewayRelativePath('/zarrproxy/nd000001/zarr/index.json?x=1', '/zarrproxy'), '/nd000001/zarr/index.json');
    assert.equal(gatewayRelativePath('/zarrproxy/nd000001/zarr/index.json', ''), '/nd000001/zarr/index.json');
    assert.equal(gatewayRelativePath('/nd000001/zarr/index.json', ''), '/nd000001/zarr/index.json');
    assert.equal(gatewayRelativePath('/data/nd000001/zarr/index.json', '/data'), '/nd000001/zarr/index.json');
    assert.equal(gatewayRelativePath('/database/nd000001', '/data'), '/database/nd000001');
  });

  it('treats zarr.json and index.json as metadata, everything else as chunks', () => {
    assert.equal(isMetadataPath('index.json'), true);
    assert.equal(isMetadataPath('a.zarr/zarr.json'), true);
    assert.equal(isMetadataPath('a.zarr/eeg_250hz/0/c/0/0'), false);
    assert.equal(isMetadataPath('a.zarr/notzarr.json'), false);
  });
});
