/**
 * The fetch credential of conversion workers (`src/datasets/git-fetch-credential.ts`, decision 0026): it reads
 * one dataset's hosted repository for five minutes, and is made only with the secret the nodes share.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { gitFetchCredentialReads, signGitFetchCredential } from '../../src/datasets/git-fetch-credential.js';
import { signReadGrant } from '../../src/datasets/read-grant.js';

const config = { dataDir: '/nonexistent', objectSigningSecret: 'the secret every node shares' };
const now = new Date('2026-11-27T12:00:00Z');
const later = (s: number) => new Date(now.getTime() + s * 1000);

describe('the fetch credential', () => {
  it('reads its dataset until it expires, five minutes on', () => {
    const token = signGitFetchCredential(config, 'nd000001', now);
    assert.equal(gitFetchCredentialReads(config, token, 'nd000001', now), true);
    assert.equal(gitFetchCredentialReads(config, token, 'nd000001', later(299)), true);
    assert.equal(gitFetchCredentialReads(config, token, 'nd000001', later(300)), false);
  });

  it('reads no other dataset, and nothing signed with another secret', () => {
    const token = signGitFetchCredential(config, 'nd000001', now);
    assert.equal(gitFetchCredentialReads(config, token, 'nd000002', now), false);
    assert.equal(gitFetchCredentialReads({ ...config, objectSigningSecret: 'another service secret' }, token, 'nd000001', now), false);
  });

  it('cannot be edited: another dataset, a later expiry or a changed signature is refused', () => {
    const [prefix, , expires, sig] = signGitFetchCredential(config, 'nd000001', now).split('.');
    assert.equal(gitFetchCredentialReads(config, [prefix, 'nd000002', expires, sig].join('.'), 'nd000002', now), false);
    assert.equal(gitFetchCredentialReads(config, [prefix, 'nd000001', Number(expires) + 3600, sig].join('.'), 'nd000001', now), false);
    assert.equal(gitFetchCredentialReads(config, [prefix, 'nd000001', expires, `${sig!.slice(0, -1)}0`].join('.'), 'nd000001', now), false);
  });

  it('is refused when it claims a life longer than any this service signs (a leaked secret still bounds the damage in time)', () => {
    const expires = Math.floor(now.getTime() / 1000) + 86_400;
    const sig = createHmac('sha256', config.objectSigningSecret).update(['git-fetch', 'nd000001', expires].join('\n')).digest('hex');
    assert.equal(gitFetchCredentialReads(config, ['ndsfetch', 'nd000001', expires, sig].join('.'), 'nd000001', now), false);
  });

  it('is not a read grant, and a read grant is not a fetch credential', () => {
    const grant = signReadGrant(config, 'nd000001', null, now).grant;
    assert.equal(gitFetchCredentialReads(config, grant, 'nd000001', now), false);
    const [, id, expires, sig] = signGitFetchCredential(config, 'nd000001', now).split('.');
    assert.equal(gitFetchCredentialReads(config, ['ndsg', id, expires, '-', sig].join('.'), 'nd000001', now), false);
  });
});
