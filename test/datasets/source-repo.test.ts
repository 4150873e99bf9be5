/**
 * The rules of `source_repo` (docs/datasets.md, docs/security.md): an https URL on an allowed host whose
 * addresses are public, or the dataset's own hosted repository; never a path, a file:// URL or another
 * dataset's repository. The resolver is stubbed: nothing here opens a connection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNdsError } from '../../src/core/errors.js';
import { classifySourceRepo, HOSTED_SOURCE, pinnedFetch, resolveSource, sourceRepoToStore, type HostLookup, type SourceRepoSettings } from '../../src/datasets/source-repo.js';

const settings: SourceRepoSettings = { publicUrl: 'https://nds.example.org', sourceRepoHosts: ['github.com', 'git.lab.example', '127.0.0.1', '::1'], sourceRepoAllowPrivate: [] };

/** A resolver that answers from a table and records what it was asked. */
function lookupOf(table: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

const refusedFor = (value: string, id = 'nd000005', s = settings) => {
  const r = classifySourceRepo(value, id, s);
  assert.equal(r.kind, 'refused', `${value} was accepted`);
  return (r as { reason: string }).reason;
};

describe('classifySourceRepo', () => {
  it('accepts an https URL on an allowed host', () => {
    const r = classifySourceRepo('https://github.com/neuro-lab/ds-rest.git', 'nd000005', settings);
    assert.equal(r.kind, 'remote');
    assert.equal((r as { url: URL }).url.hostname, 'github.com');
    assert.equal(classifySourceRepo('https://GitHub.com/o/n', 'nd000005', settings).kind, 'remote');
  });

  it('takes the dataset\'s own repository URL, and the stored marker, as its hosted repository', () => {
    assert.deepEqual(classifySourceRepo('https://nds.example.org/git/nd000005.git', 'nd000005', settings), { kind: 'hosted' });
    assert.deepEqual(classifySourceRepo('https://NDS.example.org/git/nd000005.git/', 'nd000005', settings), { kind: 'hosted' });
    assert.deepEqual(classifySourceRepo(HOSTED_SOURCE, 'nd000005', settings), { kind: 'hosted' });
  });

  it('refuses server paths and file:// URLs', () => {
    assert.match(refusedFor('/var/lib/nds/git/nd000002.git'), /a path is not a source repository/);
    assert.match(refusedFor('./nd000002.git'), /a path/);
    assert.match(refusedFor('~/repo'), /a path/);
    assert.match(refusedFor('file:///var/lib/nds/git/nd000002.git'), /file:\/\//);
    assert.match(refusedFor('FILE:///etc'), /file:\/\//);
    assert.match(refusedFor('not a url'), /not a URL/);
  });

  it("refuses another dataset's repository of this server, in any spelling", () => {
    for (const v of ['https://nds.example.org/git/nd000002.git', 'https://nds.example.org/git/nd000002.git/', 'http://nds.example.org/git/nd000002.git', 'https://nds.example.org/git/./nd000002.git', 'https://nds.example.org:8443/git/nd000005.git', 'https://x:y@nds.example.org/git/nd000005.git']) {
      assert.match(refusedFor(v), /repository of this server that is not the dataset's own.*nd000005/, v);
    }
    // While the dataset is being created, it has no repository yet: every repository of this server is another's.
    const creating = classifySourceRepo('https://nds.example.org/git/nd000005.git', undefined, settings);
    assert.equal(creating.kind, 'refused');
    assert.match((creating as { reason: string }).reason, /first push/);
  });

  it('refuses other schemes, credentials, queries, hosts that are not allowed, and bare hosts', () => {
    assert.match(refusedFor('http://github.com/o/n'), /only https/);
    assert.match(refusedFor('ssh://git@github.com/o/n'), /only https/);
    assert.match(refusedFor('git://github.com/o/n'), /only https/);
    assert.match(refusedFor('ext::sh -c touch% /tmp/pwned'), /not a URL|only https/);
    assert.match(refusedFor('https://user:token@github.com/o/n'), /user name or password/);
    assert.match(refusedFor('https://github.com/o/n?x=1'), /query/);
    assert.match(refusedFor('https://gitlab.com/o/n'), /gitlab\.com is not a host this server fetches repositories from \(github\.com, git\.lab\.example/);
    assert.match(refusedFor('https://github.com/'), /names no repository/);
  });

  it('refuses a literal loopback or private address even on an allowed host list, unless allow-listed', () => {
    assert.match(refusedFor('https://127.0.0.1/o/n'), /127\.0\.0\.1 is not a public address/);
    assert.match(refusedFor('https://[::1]/o/n'), /::1 is not a public address/);
    const allowed = { ...settings, sourceRepoAllowPrivate: ['127.0.0.0/8'] };
    assert.equal(classifySourceRepo('https://127.0.0.1:8443/o/n', 'nd000005', allowed).kind, 'remote');
  });
});

describe('resolveSource', () => {
  const url = new URL('https://git.lab.example/o/n.git');

  it('gives the first address of a host whose every address is public', async () => {
    const lookup = lookupOf({ 'git.lab.example': ['140.82.121.4', '2606:4700::1111'] });
    assert.deepEqual(await resolveSource(url, settings, lookup), { ok: true, address: '140.82.121.4', family: 4 });
  });

  it('refuses a host with one private address among public ones (a resolver may hand out either)', async () => {
    for (const bad of ['127.0.0.1', '10.0.0.7', '169.254.169.254', '100.64.1.1', '0.0.0.0', '::1', 'fd00::1', '::ffff:192.168.0.1', 'fe80::1']) {
      const r = await resolveSource(url, settings, lookupOf({ 'git.lab.example': ['140.82.121.4', bad] }));
      assert.equal(r.ok, false, bad);
      assert.match((r as { reason: string }).reason, new RegExp(`resolves to ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, which is not a public address`));
    }
  });

  it('takes a private address inside SOURCE_REPO_ALLOW_PRIVATE', async () => {
    const r = await resolveSource(url, { ...settings, sourceRepoAllowPrivate: ['10.0.0.0/8'] }, lookupOf({ 'git.lab.example': ['10.0.0.7'] }));
    assert.deepEqual(r, { ok: true, address: '10.0.0.7', family: 4 });
  });

  it('says when the host does not resolve, and does not ask the resolver about a literal address', async () => {
    const r = await resolveSource(url, settings, lookupOf({}));
    assert.deepEqual(r, { ok: false, reason: 'git.lab.example could not be resolved (ENOTFOUND)', unresolved: true });
    const lookup = lookupOf({});
    assert.equal((await resolveSource(new URL('https://127.0.0.1/o/n'), settings, lookup)).ok, false);
    assert.deepEqual(lookup.asked, []);
  });
});

describe('pinnedFetch', () => {
  it('pins the host and port to the address checked and turns redirects off', () => {
    assert.deepEqual(pinnedFetch(new URL('https://git.lab.example/o/n.git'), '140.82.121.4'), { 'http.followRedirects': 'false', 'http.curloptResolve': 'git.lab.example:443:140.82.121.4' });
    assert.equal(pinnedFetch(new URL('https://git.lab.example:8443/o/n.git'), '2606:4700::1111')['http.curloptResolve'], 'git.lab.example:8443:[2606:4700::1111]');
  });
});

describe('sourceRepoToStore (creation and PATCH)', () => {
  it('stores the URL as given, or the marker for the own repository', async () => {
    const lookup = lookupOf({ 'github.com': ['140.82.121.4'] });
    assert.equal(await sourceRepoToStore(' https://github.com/o/n.git ', 'nd000005', settings, lookup), 'https://github.com/o/n.git');
    assert.equal(await sourceRepoToStore('https://nds.example.org/git/nd000005.git', 'nd000005', settings, lookup), HOSTED_SOURCE);
  });

  it('answers validation_failed with the reason for a refused value', async () => {
    const lookup = lookupOf({ 'github.com': ['127.0.0.1'] });
    for (const [value, reason] of [
      ['/srv/git/nd000002.git', /a path/],
      ['file:///srv/git/nd000002.git', /file:\/\//],
      ['https://nds.example.org/git/nd000002.git', /not the dataset's own/],
      ['https://github.com/o/n', /resolves to 127\.0\.0\.1/],
    ] as const) {
      await assert.rejects(sourceRepoToStore(value, 'nd000005', settings, lookup), (err) => isNdsError(err, 'validation_failed') && reason.test(err.message) && err.details.some((d) => d.startsWith('source_repo: ')), value);
    }
  });

  it('accepts a host that does not resolve now: the fetch checks it again', async () => {
    assert.equal(await sourceRepoToStore('https://git.lab.example/o/n', 'nd000005', settings, lookupOf({})), 'https://git.lab.example/o/n');
  });
});
