import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownerIsGone, parseWorkerId, pidIsAlive, thisProcess, workerIdOf } from '../../src/conversion/worker-identity.js';

const self = { host: 'box/0a1b2c3d4e5f', pid: 4242, startedAt: 1_700_000_000_000 };
const alive = new Set([4242, 777]);
const isAlive = (pid: number) => alive.has(pid);
const gone = (owner: string | null) => ownerIsGone(owner, self, isAlive);

describe('worker identity', () => {
  it('names host, pid, start time and worker, and reads them back (host names may hold colons)', () => {
    const id = workerIdOf({ host: 'a:b/123', pid: 9, startedAt: 5 }, 'ff00aa');
    assert.equal(id, 'a:b/123:9:5:ff00aa');
    assert.deepEqual(parseWorkerId(id), { host: 'a:b/123', pid: 9, startedAt: 5 });
    assert.equal(parseWorkerId('old-host:123:abcdef'), undefined);
  });

  it('takes a job of a dead process of this host for lost at once', () => {
    assert.equal(gone(workerIdOf({ ...self, pid: 31337, startedAt: 1 }, 'x')), true);
  });

  it('takes a job of an earlier process that had this pid for lost (a restart in a container reuses pids)', () => {
    assert.equal(gone(workerIdOf({ ...self, startedAt: self.startedAt - 60_000 }, 'x')), true);
  });

  it('leaves alone jobs of this process, of a live process of this host, of other hosts and of unknown ids', () => {
    assert.equal(gone(workerIdOf(self, 'another-worker-here')), false);
    assert.equal(gone(workerIdOf({ ...self, pid: 777, startedAt: 1 }, 'x')), false);
    assert.equal(gone(workerIdOf({ ...self, host: 'box/ffffffffffff', pid: 31337 }, 'x')), false, 'same name, other boot or pid namespace');
    assert.equal(gone(workerIdOf({ ...self, host: 'other/0a1b2c3d4e5f', pid: 31337 }, 'x')), false);
    assert.equal(gone('box:31337:abcdef'), false);
    assert.equal(gone(null), false);
  });

  it('describes this process so that its own jobs are never taken from it', () => {
    const me = thisProcess();
    assert.equal(me.pid, process.pid);
    assert.deepEqual(thisProcess(), me, 'stable for the life of the process');
    assert.equal(ownerIsGone(workerIdOf(me, 'w1'), me, pidIsAlive), false);
    assert.equal(pidIsAlive(process.pid), true);
  });
});
