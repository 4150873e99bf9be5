/** Read grants as pure functions: what a grant reads, until when, and what a changed byte does to it. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { grantReadsPrivate, READ_GRANT_SECONDS, readGrantOf, signReadGrant } from '../../src/datasets/read-grant.js';

describe('read grants', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nds-grant-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = { dataDir, objectSigningSecret: 'a-test-secret-of-enough-length' };
  const other = { dataDir, objectSigningSecret: 'another-secret-of-enough-length' };
  const now = new Date('2026-11-24T12:00:00Z');
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

  it('reads its own private dataset until it expires, and nothing else', () => {
    const { grant, expiresAt } = signReadGrant(config, 'nd000001', 'private', now);
    assert.equal(expiresAt.getTime(), at(READ_GRANT_SECONDS).getTime());
    assert.ok(grantReadsPrivate(config, grant, 'nd000001', now));
    assert.ok(grantReadsPrivate(config, grant, 'nd000001', at(READ_GRANT_SECONDS - 1)));
    assert.ok(!grantReadsPrivate(config, grant, 'nd000001', at(READ_GRANT_SECONDS)), 'expired at expires_at');
    assert.ok(!grantReadsPrivate(config, grant, 'nd000002', now), 'another dataset');
    assert.ok(!grantReadsPrivate(other, grant, 'nd000001', now), 'another secret');
  });

  it('does not read a private dataset with a grant issued while it was public', () => {
    const { grant } = signReadGrant(config, 'nd000001', 'public', now);
    assert.ok(!grantReadsPrivate(config, grant, 'nd000001', now));
    assert.ok(!grantReadsPrivate(config, grant.replace('.public.', '.private.'), 'nd000001', now), 'the scope is signed');
  });

  it('refuses any altered part, and tokens of other shapes', () => {
    const { grant } = signReadGrant(config, 'nd000001', 'private', now);
    const parts = grant.split('.');
    for (let i = 0; i < parts.length; i++) {
      const altered = [...parts];
      altered[i] = i === 2 ? String(Number(parts[2]) + 1) : `${parts[i]!.slice(0, -1)}${parts[i]!.endsWith('0') ? '1' : '0'}`;
      assert.ok(!grantReadsPrivate(config, altered.join('.'), 'nd000001', now), `part ${i} altered`);
    }
    for (const token of ['', 'ndsg', `${grant}.x`, grant.replace('ndsg.', 'nds_.'), 'ndsg.nd000001.9999999999999.private.00', 'ndsg.x.1.private.00']) {
      assert.ok(!grantReadsPrivate(config, token, 'nd000001', now), token);
    }
  });

  it('finds a grant in an Authorization header, and leaves API keys alone', () => {
    assert.equal(readGrantOf('Bearer ndsg.nd000001.1.private.ab'), 'ndsg.nd000001.1.private.ab');
    assert.equal(readGrantOf('bearer   ndsg.a '), 'ndsg.a');
    assert.equal(readGrantOf('Bearer nds_abc'), undefined);
    assert.equal(readGrantOf('Basic ndsg.a'), undefined);
    assert.equal(readGrantOf(undefined), undefined);
  });
});
