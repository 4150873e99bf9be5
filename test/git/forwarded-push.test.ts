/**
 * A push of several MB of random (incompressible) data to the node that does not hold the repository, which
 * forwards it to the holder (decision 0026): through nginx (buffering request bodies, its default, and
 * streaming them through), and straight to the node with the body sent with a Content-Length, chunked and
 * gzip-compressed. nginx stops sending a request's body to a node once it has passed that node's answer header
 * on to the client; `git http-backend` writes its header before it reads the body, and a holder that sent it
 * at once left git waiting for the rest of a pack (the cluster test's push through nginx hung). So no node
 * answers before it has the whole body.
 *
 * Two real nds servers in this process, each with a database of its own (so the test runs on PGlite too):
 * the second is given copies of the rows it checks a caller against and of the row naming the holder.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startNginx, stopChild } from '../support/nginx.js';
import { childrenOf } from '../support/processes.js';
import { freePort, startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn } from '../conversion/support.js';

const ID = 'nd000731';
/** How long one push may take here before it counts as hanging (each takes well under a second alone). */
const PUSH_LIMIT_MS = 30_000;
/** How long the client holds back the end of a body once git reads it, watching for an answer that comes before it. */
const HELD_MS = 1_500;

/** `git` with no prompts and no credential helper, asynchronous (the servers answer in this process). */
function git(cwd: string, ...args: string[]): Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' },
      timeout: PUSH_LIMIT_MS,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status, signal) => resolve({ status, signal, stderr }));
  });
}

/** A new commit on main adding `mb` MB of random bytes; returns its id. */
function commitRandom(repo: string, mb: number): string {
  const name = `blob-${randomBytes(4).toString('hex')}.bin`;
  writeFileSync(path.join(repo, name), randomBytes(mb * 1024 * 1024));
  gitIn(repo, 'add', name);
  gitIn(repo, 'commit', '-q', '-m', name);
  return gitIn(repo, 'rev-parse', 'HEAD');
}

/** Whether a git process under this one (the servers run here) is reading a pack: unpack-objects or index-pack. */
function gitReadingPack(): boolean {
  const pending = [process.pid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    for (const child of childrenOf(pid)) {
      let command = '';
      try {
        command = readFileSync(`/proc/${child}/cmdline`, 'utf8');
      } catch {
        continue; // Gone meanwhile.
      }
      if (/\0(unpack-objects|index-pack)\0/.test(command)) return true;
      pending.push(child);
    }
  }
  return false;
}

async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + PUSH_LIMIT_MS;
  while (!done()) {
    assert.ok(Date.now() < deadline, `${what} within ${PUSH_LIMIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const pktLine = (text: string) => `${(text.length + 4).toString(16).padStart(4, '0')}${text}`;

/** The body of a receive-pack request moving main from `from` to `to`: the command, a flush, the pack. */
function receivePackBody(repo: string, from: string, to: string): Buffer {
  const pack = execFileSync('git', ['pack-objects', '--stdout', '--revs', '-q'], { cwd: repo, input: `${to}\n^${from}\n`, maxBuffer: 256 * 1024 * 1024 });
  return Buffer.concat([Buffer.from(`${pktLine(`${from} ${to} refs/heads/main\0report-status\n`)}0000`), pack]);
}

/** A body as a stream of 64 KiB pieces: fetch sends it chunked. */
function chunked(body: Buffer): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= body.length) return controller.close();
      controller.enqueue(body.subarray(at, (at += 64 * 1024)));
    },
  });
}

describe('a push to the node without the repository, forwarded to the holder, behind nginx and not', { timeout: 240_000 }, () => {
  let holder: TestServer;
  let other: TestServer;
  let owner: TestAccount;
  const nginxes: ChildProcess[] = [];
  let repo: string;
  const work = mkdtempSync(path.join(os.tmpdir(), 'nds-forwarded-push-'));
  /** Where a client pushes: nginx in front of the node without the repository, two ways, or that node itself. */
  const entries = { nginx: '', 'nginx streaming request bodies': '', 'the node': '' };
  const remote = (base: string) => {
    const u = new URL(`${base}/git/${ID}.git`);
    [u.username, u.password] = ['nds', owner.key];
    return u.toString();
  };
  const holderMain = () => execFileSync('git', ['--git-dir', repositoryDir(holder.config.gitDir, ID), 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
  /** POSTs a receive-pack request to the node without the repository; resolves with the answer's header. */
  const receivePack = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${entries['the node']}/git/${ID}.git/git-receive-pack`, {
      method: 'POST',
      headers: { ...headers, authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`, 'content-type': 'application/x-git-receive-pack-request' },
      body,
      duplex: 'half',
      signal: AbortSignal.timeout(PUSH_LIMIT_MS),
    } as RequestInit);
  const assertReported = (report: string) => {
    assert.match(report, /unpack ok\n/);
    assert.match(report, /ok refs\/heads\/main\n/);
  };

  before(async () => {
    const env = { IN_PROCESS_WORKER: 'false' };
    [holder, other] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
    owner = await createAccount(holder);
    await insertDatasetRows(holder.deps.db, { id: ID, name: 'Forwarded pushes', owner_id: owner.user.id, visibility: 'private' });
    repo = mkdtempSync(path.join(os.tmpdir(), 'nds-forwarded-push-repo-'));
    gitIn(repo, 'init', '-q');
    writeFileSync(path.join(repo, 'README.md'), 'pushed through two nodes\n');
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '-q', '-m', 'first');
    // The first push goes to the holder itself: it creates the repository there and records the holder.
    const first = await git(repo, 'push', '-q', remote(holder.url), 'main');
    assert.equal(first.status, 0, first.stderr);
    // The other node reads the caller, the dataset and the holder from its own copy of the rows.
    for (const table of ['users', 'api_keys', 'datasets', 'repository_holders'] as const) {
      const rows = await holder.deps.db.selectFrom(table).selectAll().execute();
      // The same ids (users' is an identity column, generated always).
      const insert = other.deps.db.insertInto(table).values(rows as never).compile();
      await other.deps.db.executeQuery(CompiledQuery.raw(insert.sql.replace(/\) values \(/, ') overriding system value values ('), [...insert.parameters]));
    }
    for (const [name, requestBuffering] of [['nginx', true], ['nginx streaming request bodies', false]] as const) {
      const port = await freePort();
      nginxes.push(await startNginx(path.join(work, name.replaceAll(' ', '-')), port, [other.port], {}, { requestBuffering }));
      entries[name] = `http://127.0.0.1:${port}`;
    }
    entries['the node'] = other.url;
  });
  after(async () => {
    await Promise.all(nginxes.map((n) => stopChild(n, 'SIGQUIT')));
    await Promise.all([holder?.close(), other?.close()]);
    rmSync(work, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  for (const through of ['nginx', 'nginx streaming request bodies'] as const) {
    it(`git push of 8 MB through ${through}, to the node without the repository: the holder has the commit`, async () => {
      const head = commitRandom(repo, 8);
      const pushed = await git(repo, 'push', '-q', remote(entries[through]), 'main');
      assert.equal(pushed.signal, null, `git push did not end within ${PUSH_LIMIT_MS} ms`);
      assert.equal(pushed.status, 0, pushed.stderr);
      assert.equal(holderMain(), head);
    });
  }

  const sendings = {
    'with a Content-Length': (body: Buffer) => ({ body: Uint8Array.from(body), headers: {} }),
    chunked: (body: Buffer) => ({ body: chunked(body), headers: {} }),
    'gzip-compressed and chunked': (body: Buffer) => ({ body: chunked(gzipSync(body)), headers: { 'content-encoding': 'gzip' } }),
  } satisfies Record<string, (body: Buffer) => { body: BodyInit; headers: Record<string, string> }>;
  for (const [how, send] of Object.entries(sendings)) {
    it(`a receive-pack request of 2 MB ${how}, to the node without the repository: unpacked by the holder`, async () => {
      const from = holderMain();
      const to = commitRandom(repo, 2);
      const { body, headers } = send(receivePackBody(repo, from, to));
      const answer = await receivePack(body, headers);
      assert.equal(answer.status, 200);
      assertReported(await answer.text());
      assert.equal(holderMain(), to);
    });
  }

  it(`no answer before the whole body: while the end of the pack is held back, git on the holder waits and no header comes (${HELD_MS} ms)`, async () => {
    const from = holderMain();
    const to = commitRandom(repo, 2);
    const whole = receivePackBody(repo, from, to);
    const heldFrom = whole.length - 1024;
    let answered = false;
    let answeredEarly: boolean | undefined;
    let onAnswer!: () => void;
    const answerCame = new Promise<void>((resolve) => (onAnswer = resolve));
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at === whole.length) return controller.close();
        if (at === heldFrom) {
          // git on the holder (a process under this one) reads the pack: `git http-backend` wrote its header before
          // it started receive-pack. Before the fix that header reached the client within moments.
          await until(() => answered || gitReadingPack(), 'git on the holder reading the pack');
          await Promise.race([answerCame, new Promise((resolve) => setTimeout(resolve, HELD_MS))]);
          answeredEarly = answered;
        }
        const end = at === heldFrom ? whole.length : Math.min(heldFrom, at + 64 * 1024);
        controller.enqueue(whole.subarray(at, end));
        at = end;
      },
    });
    const answer = await receivePack(body).finally(() => {
      answered = true;
      onAnswer();
    });
    assert.equal(answeredEarly, false, "the answer's header came before the body was all sent");
    assert.equal(answer.status, 200);
    assertReported(await answer.text());
    assert.equal(holderMain(), to);
  });
});
