import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../src/core/circuit-breaker.js';

describe('CircuitBreaker', () => {
  it('lets calls through while closed', () => {
    const b = new CircuitBreaker(1000, () => 0);
    assert.equal(b.allow(), true);
    assert.equal(b.allow(), true);
    assert.equal(b.state, 'closed');
  });

  it('refuses calls for the cool-down after a failure, then lets one probe through', () => {
    let now = 0;
    const b = new CircuitBreaker(1000, () => now);
    assert.equal(b.failed(), true, 'an outage begins');
    assert.equal(b.allow(), false);
    now = 999;
    assert.equal(b.allow(), false);
    now = 1000;
    assert.equal(b.allow(), true, 'the probe');
    assert.equal(b.state, 'half-open');
    assert.equal(b.allow(), false, 'one probe at a time');
  });

  it('closes when the probe succeeds, and opens for another cool-down when it fails', () => {
    let now = 0;
    const b = new CircuitBreaker(1000, () => now);
    b.failed();
    now = 1000;
    assert.equal(b.allow(), true);
    assert.equal(b.failed(), false, 'the same outage goes on');
    assert.equal(b.allow(), false);
    now = 2000;
    assert.equal(b.allow(), true);
    assert.equal(b.succeeded(), true, 'the service is back');
    assert.equal(b.state, 'closed');
    assert.equal(b.allow(), true);
    assert.equal(b.succeeded(), false);
  });

  it('lets another probe through when one never reports', () => {
    let now = 0;
    const b = new CircuitBreaker(1000, () => now);
    b.failed();
    now = 1000;
    assert.equal(b.allow(), true);
    now = 1999;
    assert.equal(b.allow(), false);
    now = 2000;
    assert.equal(b.allow(), true);
  });
});
