/**
 * The address classifier behind `source_repo` (docs/security.md): the server fetches repositories only from
 * public addresses, whatever form an address is written in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressMatcher, isPublicAddress, parseCidr } from '../../src/core/address-ranges.js';

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
