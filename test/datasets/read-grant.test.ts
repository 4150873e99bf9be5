/** Read grants as pure functions: what a grant names, until when, and what a changed byte does to it. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { READ_GRANT_SECONDS, readGrantClaims, readGrantOf, signReadGrant } from '../../src/datasets/read-grant.js';

describe('read grants', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nds-grant-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = { dataDir, objectSigningSecret: 'a-test-secret-of-enough-length' };
  const other = { dataDir, objectSigningSecret: 'another-secret-of-enough-length' };
  const now = new Date('2026-11-24T12:00:00Z');
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

  it('names its dataset and its account until it expires, and only with its own secret', () => {
    const { grant, expiresAt } = signReadGrant(config, 'nd000001', 42, now);
    assert.equal(expiresAt.getTime(), at(READ_GRANT_SECONDS).getTime());
    assert.deepEqual(readGrantClaims(config, grant, now), { datasetId: 'nd000001', user: 42 });
    assert.deepEqual(readGrantClaims(config, grant, at(READ_GRANT_SECONDS - 1)), { datasetId: 'nd000001', user: 42 });
    assert.equal(readGrantClaims(config, grant, at(READ_GRANT_SECONDS)), undefined, 'expired at expires_at');
    assert.equal(readGrantClaims(other, grant, now), undefined, 'another secret');
  });

  it('names no account when issued to someone not signed in, and the holder is signed', () => {
    const { grant } = signReadGrant(config, 'nd000001', null, now);
    assert.deepEqual(readGrantClaims(config, grant, now), { datasetId: 'nd000001', user: null });
    const [prefix, id, expires, , sig] = grant.split('.');
    assert.equal(readGrantClaims(config, [prefix, id, expires, '42', sig].join('.'), now), undefined, 'an account put in');
    const owners = signReadGrant(config, 'nd000001', 42, now).grant.split('.');
    assert.equal(readGrantClaims(config, [...owners.slice(0, 3), '-', owners[4]].join('.'), now), undefined, 'the account taken out');
  });

  it('names the key or session that asked for it, and cannot be moved to another or have it taken out', () => {
    const byKey = signReadGrant(config, 'nd000001', 42, now, 'k7').grant;
    assert.deepEqual(readGrantClaims(config, byKey, now), { datasetId: 'nd000001', user: 42, signIn: 'k7' });
    const session = `s${'ab'.repeat(32)}`;
    assert.deepEqual(readGrantClaims(config, signReadGrant(config, 'nd000001', 42, now, session).grant, now), { datasetId: 'nd000001', user: 42, signIn: session });
    const parts = byKey.split('.');
    for (const holder of ['42', '42~k8', `42~${session}`, '42~x7']) {
      assert.equal(readGrantClaims(config, [...parts.slice(0, 3), holder, parts[4]].join('.'), now), undefined, holder);
    }
  });

  it('refuses any altered part, and tokens of other shapes', () => {
    const { grant } = signReadGrant(config, 'nd000001', 42, now);
    const parts = grant.split('.');
    for (let i = 0; i < parts.length; i++) {
      const altered = [...parts];
      altered[i] = i === 2 || i === 3 ? String(Number(parts[i]) + 1) : `${parts[i]!.slice(0, -1)}${parts[i]!.endsWith('0') ? '1' : '0'}`;
      assert.equal(readGrantClaims(config, altered.join('.'), now), undefined, `part ${i} altered`);
    }
    for (const token of ['', 'ndsg', `${grant}.x`, grant.replace('ndsg.', 'nds_.'), 'ndsg.nd000001.9999999999999.42.00', 'ndsg.x.1.42.00', 'ndsg.nd000001.1.042.00', 'ndsg.nd000001.1.private.00']) {
      assert.equal(readGrantClaims(config, token, now), undefined, token);
    }
  });

  it('finds a grant in an Authorization header, and leaves API keys alone', () => {
    assert.equal(readGrantOf('Bearer ndsg.nd000001.1.42.ab'), 'ndsg.nd000001.1.42.ab');
    assert.equal(readGrantOf('bearer   ndsg.a '), 'ndsg.a');
    assert.equal(readGrantOf('Bearer nds_abc'), undefined);
    assert.equal(readGrantOf('Basic ndsg.a'), undefined);
    assert.equal(readGrantOf(undefined), undefined);
  });
});
