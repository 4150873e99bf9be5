/**
 * IP addresses and ranges (docs/security.md).
 * The address classifier behind `source_repo`: the server fetches repositories only from public addresses,
 * whatever form an address is written in.
 * Which address a request is counted against. Behind a proxy every client has the proxy's address, so without
 * `X-Forwarded-For` one client could lock everyone out of sign-in; believing the header from anyone would let a
 * client pick a fresh address for every guess. Only hops inside TRUSTED_PROXIES are walked past.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { addressMatcher, canonicalAddress, clientAddress, isPublicAddress, limitKeyOf, parseCidr, parseTrustedProxies } from '../../src/core/ip-addresses.js';

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, shared, documentation, multicast and reserved IPv4 ranges', () => {
    for (const a of ['127.0.0.1', '127.255.255.254', '0.0.0.0', '0.1.2.3', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255']) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it('accepts public IPv4 addresses, also those right beside the refused ranges', () => {
    for (const a of ['8.8.8.8', '140.82.121.4', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '169.253.255.255', '11.0.0.0', '223.255.255.255']) {
      assert.equal(isPublicAddress(a), true, a);
    }
  });

  it('refuses IPv6 loopback, unspecified, unique-local, link-local, site-local, multicast, documentation and tunnel ranges', () => {
    for (const a of ['::1', '::', '0:0:0:0:0:0:0:1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf::1', 'fec0::1', 'ff02::1', '2001:db8::1', '2002:c000:0201::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '100::1', '64:ff9b:1::1', '3fff::1']) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it('judges an IPv4 address carried inside IPv6 by the IPv4 address (mapped, NAT64), and refuses IPv4-compatible ones', () => {
    assert.equal(isPublicAddress('::ffff:127.0.0.1'), false);
    assert.equal(isPublicAddress('::ffff:7f00:1'), false);
    assert.equal(isPublicAddress('::ffff:10.1.2.3'), false);
    assert.equal(isPublicAddress('::ffff:169.254.169.254'), false);
    assert.equal(isPublicAddress('::ffff:8.8.8.8'), true);
    assert.equal(isPublicAddress('64:ff9b::7f00:1'), false);
    assert.equal(isPublicAddress('64:ff9b::10.0.0.1'), false);
    assert.equal(isPublicAddress('64:ff9b::8.8.8.8'), true);
    assert.equal(isPublicAddress('::127.0.0.1'), false);
    assert.equal(isPublicAddress('::8.8.8.8'), false);
  });

  it('accepts public IPv6 addresses', () => {
    for (const a of ['2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '2001:4860:4860::8888', '2620:0:2d0:200::7']) assert.equal(isPublicAddress(a), true, a);
  });

  it('is false for what is not an address', () => {
    for (const a of ['', 'localhost', 'github.com', '127.1', '1.2.3.4.5', '[::1]', '::g']) assert.equal(isPublicAddress(a), false, a);
  });
});

describe('CIDR lists (SOURCE_REPO_ALLOW_PRIVATE)', () => {
  it('parses addresses and address/prefix pairs of both families, and nothing else', () => {
    assert.deepEqual(parseCidr('127.0.0.1'), { address: '127.0.0.1', prefix: 32, family: 'ipv4' });
    assert.deepEqual(parseCidr(' 10.0.0.0/8 '), { address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    assert.deepEqual(parseCidr('fd00::/8'), { address: 'fd00::', prefix: 8, family: 'ipv6' });
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/8/8', 'host/8', '10.0.0.0/-1', '']) assert.equal(parseCidr(bad), undefined, bad);
  });

  it('matches the addresses inside the listed ranges only, IPv4-mapped forms included', () => {
    const allowed = addressMatcher(['127.0.0.1/32', '10.1.0.0/16', 'fd00::/8']);
    assert.equal(allowed('127.0.0.1'), true);
    assert.equal(allowed('::ffff:127.0.0.1'), true);
    assert.equal(allowed('127.0.0.2'), false);
    assert.equal(allowed('10.1.200.3'), true);
    assert.equal(allowed('10.2.0.1'), false);
    assert.equal(allowed('fd12::1'), true);
    assert.equal(allowed('fc00::1'), false);
    assert.equal(allowed('not an address'), false);
  });
});

const proxies = parseTrustedProxies('10.0.0.0/8, 192.168.1.7, fd00::/8, ::ffff:172.16.0.0/108');

describe('the client address', () => {
  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const none = parseTrustedProxies(undefined);
    assert.equal(none.empty, true);
    assert.equal(clientAddress('203.0.113.9', '198.51.100.1', none), '203.0.113.9');
    assert.equal(clientAddress('10.1.2.3', '198.51.100.1', none), '10.1.2.3');
  });

  it('is the socket peer when the peer is not a trusted proxy (a client talking to the server directly)', () => {
    assert.equal(clientAddress('203.0.113.9', '198.51.100.1, 10.0.0.5', proxies), '203.0.113.9');
  });

  it('is the rightmost untrusted hop: spoofed entries left of it are ignored', () => {
    // The client sent "X-Forwarded-For: 1.1.1.1, 2.2.2.2"; nginx appended the address it saw.
    assert.equal(clientAddress('10.0.0.2', '1.1.1.1, 2.2.2.2, 198.51.100.7', proxies), '198.51.100.7');
  });

  it('walks past every trusted hop, and stops at the first untrusted one', () => {
    assert.equal(clientAddress('10.0.0.2', '1.1.1.1, 198.51.100.7, 10.9.9.9, 192.168.1.7', proxies), '198.51.100.7');
    // 192.168.1.8 is not trusted (only .7 is): it is the client, though a trusted hop stands left of it.
    assert.equal(clientAddress('10.0.0.2', '10.3.3.3, 192.168.1.8', proxies), '192.168.1.8');
  });

  it('is the leftmost entry when every hop is trusted', () => {
    assert.equal(clientAddress('10.0.0.2', '10.0.0.9, 10.0.0.8', proxies), '10.0.0.9');
  });

  it('is the trusted peer itself when X-Forwarded-For is missing or empty', () => {
    assert.equal(clientAddress('10.0.0.2', undefined, proxies), '10.0.0.2');
    assert.equal(clientAddress('10.0.0.2', '', proxies), '10.0.0.2');
  });

  it('reads IPv6 peers, hops and ranges, in any spelling, and gives them in one canonical form', () => {
    assert.equal(clientAddress('fd00::1', '2001:DB8:0:0::1', proxies), '2001:db8::1');
    assert.equal(clientAddress('fd12:3456::9', '[2001:db8::2]:4711, fd00::7', proxies), '2001:db8::2');
    assert.equal(clientAddress('2001:db8::5', '198.51.100.7', proxies), '2001:db8::5');
  });

  it('reads IPv4-mapped IPv6 addresses as the IPv4 address they map, for peers, hops and ranges', () => {
    // A dual-stack listener reports IPv4 peers as ::ffff:a.b.c.d.
    assert.equal(clientAddress('::ffff:10.0.0.2', '198.51.100.7', proxies), '198.51.100.7');
    assert.equal(clientAddress('::ffff:203.0.113.9', undefined, proxies), '203.0.113.9');
    assert.equal(clientAddress('10.0.0.2', '::ffff:198.51.100.7', proxies), '198.51.100.7');
    // ::ffff:172.16.0.0/108 is 172.16.0.0/12.
    assert.equal(clientAddress('172.20.1.1', '198.51.100.7', proxies), '198.51.100.7');
    assert.equal(clientAddress('::ffff:172.20.1.1', '198.51.100.7', proxies), '198.51.100.7');
  });

  it('accepts ports, which some proxies write, and drops them', () => {
    assert.equal(clientAddress('10.0.0.2', '198.51.100.7:51234', proxies), '198.51.100.7');
  });

  it('ends the walk at the trusted hop that passed on an entry that is no address', () => {
    for (const garbage of ['unknown', 'hello world', '1.2.3', '010.0.0.1', '0x7f.0.0.1', '1.2.3.4.5', '::g', '[::1', '1.2.3.4:99999999', '"1.2.3.4"', '999.1.1.1', '1.2.3.4/8']) {
      assert.equal(clientAddress('10.0.0.2', garbage, proxies), '10.0.0.2', garbage);
      assert.equal(clientAddress('10.0.0.2', `${garbage}, 10.0.0.3`, proxies), '10.0.0.3', garbage);
    }
    // An empty entry between commas is no address either.
    assert.equal(clientAddress('10.0.0.2', '198.51.100.7,,10.0.0.3', proxies), '10.0.0.3');
    // An untrusted hop found before the garbage is still the client.
    assert.equal(clientAddress('10.0.0.2', 'garbage, 198.51.100.7', proxies), '198.51.100.7');
  });

  it('survives a huge header of trusted hops', () => {
    const header = Array.from({ length: 5000 }, (_, i) => `10.0.${i % 250}.${i % 200}`).join(', ');
    assert.equal(clientAddress('10.0.0.2', `198.51.100.7, ${header}`, proxies), '198.51.100.7');
  });

  it('is "unknown" when the socket has no address (a Unix socket), whatever the header says', () => {
    assert.equal(clientAddress(undefined, '198.51.100.7', proxies), 'unknown');
    assert.equal(clientAddress('', '198.51.100.7', proxies), 'unknown');
  });
});

describe('canonicalAddress', () => {
  it('gives one spelling per address, and undefined for anything else', () => {
    assert.equal(canonicalAddress(' 2001:0DB8:0000::0001 '), '2001:db8::1');
    assert.equal(canonicalAddress('fe80::1%eth0'), 'fe80::1');
    assert.equal(canonicalAddress('[::1]'), '::1');
    assert.equal(canonicalAddress('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalAddress('127.0.0.1:80'), '127.0.0.1');
    assert.equal(canonicalAddress('127.1'), undefined);
    assert.equal(canonicalAddress('localhost'), undefined);
  });
});

// A host on IPv6 owns a /64 at least and may send each request from a new address in it: per-IP limits count the prefix.
describe('limitKeyOf', () => {
  it('counts every address of one /64 as one client, however it is written', () => {
    const key = '2001:db8:42:7::/64';
    for (const a of ['2001:db8:42:7::1', '2001:db8:42:7:ffff:ffff:ffff:ffff', '2001:0DB8:0042:0007:1a2b:3c4d:5e6f:7a8b', '2001:db8:42:7:0:0:0:9', '2001:db8:42:7::a%eth0']) {
      assert.equal(limitKeyOf(a), key, a);
    }
  });

  it('keeps neighbouring /64s apart', () => {
    assert.notEqual(limitKeyOf('2001:db8:42:7::1'), limitKeyOf('2001:db8:42:8::1'));
    assert.equal(limitKeyOf('2001:db8:42:8::1'), '2001:db8:42:8::/64');
    assert.equal(limitKeyOf('2001:db8::1'), '2001:db8::/64');
  });

  it('counts an IPv4 address, and an IPv4-mapped IPv6 one, by the IPv4 address', () => {
    assert.equal(limitKeyOf('198.51.100.7'), '198.51.100.7');
    assert.equal(limitKeyOf('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(limitKeyOf('::ffff:c633:6407'), '198.51.100.7');
    assert.notEqual(limitKeyOf('198.51.100.7'), limitKeyOf('198.51.100.8'));
  });

  // Behind a stateless translator every IPv4 client arrives in one /64; a 6to4 host holds a /48.
  it('counts an IPv6 address that stands for an IPv4 host by that host (NAT64, SIIT, IPv4-compatible, 6to4)', () => {
    for (const [form, a, b] of [
      ['NAT64', '64:ff9b::198.51.100.7', '64:ff9b::203.0.113.9'],
      ['IPv4-translated (SIIT)', '::ffff:0:198.51.100.7', '::ffff:0:203.0.113.9'],
      ['IPv4-compatible', '::198.51.100.7', '::203.0.113.9'],
      ['6to4', '2002:c633:6407::1', '2002:cb00:7109::1'],
    ]) {
      assert.equal(limitKeyOf(a!), '198.51.100.7', `${form}: ${a}`);
      assert.equal(limitKeyOf(b!), '203.0.113.9', `${form}: ${b}`);
    }
    assert.equal(limitKeyOf('64:ff9b::c633:6407'), '198.51.100.7');
    const sixToFour = new Set(['2002:c633:6407:1::1', '2002:c633:6407:2::1', '2002:c633:6407:ffff:1:2:3:4'].map(limitKeyOf));
    assert.deepEqual([...sixToFour], ['198.51.100.7'], 'every /64 of one 6to4 host is that host');
  });

  it('counts a Teredo address whole: the clients of one Teredo server share its upper 64 bits', () => {
    // RFC 4380: server 65.54.227.120, flags 8000, then each client's port and IPv4 address, bits inverted.
    const a = '2001:0:4136:e378:8000:63bf:3fff:fdd2';
    const b = '2001:0:4136:e378:8000:f227:bec5:a3f6';
    assert.equal(limitKeyOf(a), a);
    assert.equal(limitKeyOf('2001:0000:4136:E378:8000:63BF:3FFF:FDD2%teredo'), a);
    assert.notEqual(limitKeyOf(a), limitKeyOf(b));
  });

  it('gives loopback its /64, and leaves what is not an address as it is', () => {
    assert.equal(limitKeyOf('::1'), '::/64');
    assert.equal(limitKeyOf('fe80::1%en0'), 'fe80::/64');
    assert.equal(limitKeyOf('unknown'), 'unknown');
  });
});

describe('TRUSTED_PROXIES', () => {
  it('takes CIDRs and single addresses of both families, and lists them canonically', () => {
    assert.deepEqual(parseTrustedProxies(' 10.0.0.0/8 ,, 2001:DB8::/32,127.0.0.1 ,::1').cidrs, ['10.0.0.0/8', '2001:db8::/32', '127.0.0.1/32', '::1/128']);
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies.cidrs, ['10.0.0.0/8']);
    assert.equal(loadConfig({}).trustedProxies.empty, true);
  });

  it('refuses at start-up what is not a range, naming the setting and the entry', () => {
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', 'example.org', '10.0.0.0/', '10.0.0.0/-1', '10.0/8', '*']) {
      assert.throws(() => loadConfig({ TRUSTED_PROXIES: `127.0.0.1, ${bad}` }), (err: unknown) => err instanceof ConfigError && err.setting === 'TRUSTED_PROXIES' && err.message.includes(bad), bad);
    }
  });
});
