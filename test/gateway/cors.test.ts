import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allowedOrigin, allowedOriginHeaders, OriginPolicy, REFUSED_ORIGIN_HEADERS } from '../../src/gateway/cors.js';

describe('gateway CORS', () => {
  const domain = 'nds.example.org';

  it('echoes the service domain and its subdomains, on any scheme and port', () => {
    for (const o of ['https://nds.example.org', 'http://nds.example.org:8080', 'https://viewer.nds.example.org', 'https://a.b.nds.example.org']) {
      assert.equal(allowedOrigin(o, domain), o, o);
    }
  });

  it('never matches a domain that merely ends with the service domain', () => {
    // The classic mistake: a suffix test without the dot lets an attacker register evilnds.example.org.
    for (const o of ['https://evilnds.example.org', 'https://nds.example.org.evil.com', 'https://example.org', 'https://xnds.example.org:443']) {
      assert.equal(allowedOrigin(o, domain), undefined, o);
    }
  });

  it('echoes localhost, 127.0.0.1 and [::1] on any port and scheme', () => {
    for (const o of ['http://localhost', 'http://localhost:5173', 'https://localhost:8443', 'http://127.0.0.1:9000', 'http://[::1]:3000']) {
      assert.equal(allowedOrigin(o, domain), o, o);
    }
  });

  it('refuses look-alikes of loopback, malformed origins and non-http schemes', () => {
    for (const o of ['http://localhost.evil.com', 'http://evillocalhost', 'http://127.0.0.2:80', 'null', '', 'localhost', 'http://localhost/path', 'http://user@localhost', 'file://localhost', 'chrome-extension://abc']) {
      assert.equal(allowedOrigin(o, domain), undefined, o);
    }
    assert.equal(allowedOrigin(undefined, domain), undefined);
  });

  it('remembers verdicts without changing them', () => {
    const policy = new OriginPolicy(domain);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(policy.headers('https://x.nds.example.org'), allowedOriginHeaders('https://x.nds.example.org'));
      assert.equal(policy.headers('https://evilnds.example.org'), REFUSED_ORIGIN_HEADERS);
    }
    for (let i = 0; i < 1500; i++) policy.headers(`https://h${i}.evil.com`);
    assert.deepEqual(policy.headers('http://localhost:1'), allowedOriginHeaders('http://localhost:1'));
    assert.equal(policy.headers(undefined), REFUSED_ORIGIN_HEADERS);
  });
});
