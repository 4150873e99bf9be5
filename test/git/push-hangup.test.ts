/**
 * A push whose client goes away once git has its whole pack, before git's answer has been read: git still
 * takes the push (`main` moves), and `onExit` must still run, since what follows a push hangs on it (the
 * repository measured against its owner's storage quota, the push's grant of room given back, the conversion).
 * Before, the end of git was awaited on its output being read to the end, which never came.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runGitHttpBackend } from '../../src/git/git-http-backend.js';
import { gitIn } from '../conversion/support.js';

/** A pkt-line of git's protocol. */
function pkt(line: string): Buffer {
  const body = Buffer.from(line);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

describe('git http-backend when nobody reads its answer', () => {
  let root: string;
  let work: string;
  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'nds-backend-root-'));
    work = mkdtempSync(path.join(os.tmpdir(), 'nds-backend-work-'));
    gitIn(work, 'init', '-q', '-b', 'main');
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  /** A receive-pack request body that creates `main` on a new repository, with 2 MB that do not compress. */
  function pushBody(name: string): { body: Buffer; head: string } {
    execFileSync('git', ['init', '-q', '--bare', path.join(root, `${name}.git`)]);
    writeFileSync(path.join(work, `${name}.bin`), randomBytes(2_000_000));
    gitIn(work, 'add', '-A');
    gitIn(work, 'commit', '-q', '-m', name);
    const head = gitIn(work, 'rev-parse', 'HEAD');
    const pack = execFileSync('git', ['pack-objects', '--stdout', '--revs', '-q'], { cwd: work, input: `${head}\n`, maxBuffer: 1 << 30 });
    const commands = pkt(`${'0'.repeat(40)} ${head} refs/heads/main\0report-status object-format=sha1 agent=git/2.39\n`);
    return { body: Buffer.concat([commands, Buffer.from('0000'), pack]), head };
  }

  for (const [what, leave] of [
    ['its answer cancelled (the client hung up)', (res: Response) => res.body?.cancel()],
    ['its answer never read', () => undefined],
  ] as const) {
    it(`takes the push and calls onExit, with ${what}`, async () => {
      const name = what.replace(/\W+/g, '-');
      const { body, head } = pushBody(name);
      let exited!: (code: number | null) => void;
      const exit = new Promise<number | null>((resolve) => (exited = resolve));
      const res = await runGitHttpBackend({
        method: 'POST',
        pathInfo: `/${name}.git/git-receive-pack`,
        query: '',
        contentType: 'application/x-git-receive-pack-request',
        contentEncoding: undefined,
        body: new Blob([new Uint8Array(body)]).stream(),
        projectRoot: root,
        remoteUser: 'someone',
        remoteAddr: '127.0.0.1',
        onExit: exited,
      });
      assert.equal(res.status, 200);
      await leave(res);
      const code = await Promise.race([exit, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 20_000).unref())]);
      assert.notEqual(code, 'late', 'onExit was called within 20 s');
      assert.equal(gitIn(path.join(root, `${name}.git`), 'rev-parse', 'refs/heads/main'), head, 'git took the push');
    });
  }
});
