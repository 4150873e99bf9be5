/**
 * Every git the server runs gets one fixed environment (`src/git/spawn-git.ts`): the machine's system and
 * user configuration, the server's own GIT_* variables, hooks and credential helpers never reach it, and it
 * uses no transport its caller did not name. Debian's git-lfs package writes `filter.lfs.required=true` into
 * the system configuration; with it, `git archive` of a tree with lfs pointers failed before. A run given
 * limits (a push's, decision 0054) gets no more memory or CPU time than they say, nor do the gits it starts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { git, runGit } from '../../src/git/run-git.js';
import { gitEnvironment, spawnGit, type ProcessLimits } from '../../src/git/spawn-git.js';
import { deltaBombPack, zeroBlobPack } from './crafted-packs.js';

const plainGit = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

describe('the environment of the server\'s git', () => {
  let tmp: string;
  let work: string;
  let bare: string;
  const saved: Record<string, string | undefined> = {};
  const machine = (name: string, value: string) => {
    saved[name] = process.env[name];
    process.env[name] = value;
  };

  before(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-spawn-git-'));
    work = path.join(tmp, 'work');
    mkdirSync(work);
    writeFileSync(path.join(work, '.gitattributes'), '*.edf filter=lfs diff=lfs merge=lfs -text\n');
    writeFileSync(path.join(work, 'a.edf'), `version https://git-lfs.github.com/spec/v1\noid sha256:${'0'.repeat(64)}\nsize 10\n`);
    plainGit(work, 'init', '-q');
    plainGit(work, 'add', '-A');
    plainGit(work, 'commit', '-q', '-m', 'pointer');
    bare = path.join(tmp, 'bare.git');
    plainGit(tmp, 'clone', '-q', '--bare', work, bare);
    // The machine: git-lfs's system filter (a smudge that fails, as git-lfs does without its server), a user
    // configuration with a name of its own, and variables of the server's environment meant for something else.
    const system = path.join(tmp, 'gitconfig-system');
    writeFileSync(system, '[filter "lfs"]\n\tsmudge = false %f\n\tprocess = false\n\trequired = true\n[user]\n\tname = machine-system\n');
    const global = path.join(tmp, 'gitconfig-global');
    writeFileSync(global, '[user]\n\tname = machine-global\n[core]\n\thooksPath = /tmp\n');
    machine('GIT_CONFIG_SYSTEM', system);
    machine('GIT_CONFIG_GLOBAL', global);
    machine('GIT_DIR', path.join(tmp, 'not-this-one'));
    machine('GIT_CONFIG_PARAMETERS', "'user.name'='machine-parameters'");
  });
  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it('reads no configuration of the machine and none of the server\'s GIT_* variables', async () => {
    const listed = await git(['--git-dir', bare, 'config', '--list', '--show-origin']);
    assert.doesNotMatch(listed, /machine|filter\.lfs/);
    assert.match(listed, /core\.hookspath=\/dev\/null/i);
  });

  it('archives a tree of lfs pointers as it is, with git-lfs\'s required system filter on the machine', async () => {
    const r = await runGit(['--git-dir', bare, 'archive', '--format=tar', 'HEAD']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`oid sha256:${'0'.repeat(64)}`), 'the pointer is in the archive');
  });

  it('runs no hook of a repository', async () => {
    const marker = path.join(tmp, 'hook-ran');
    const hook = path.join(bare, 'hooks', 'reference-transaction');
    mkdirSync(path.dirname(hook), { recursive: true });
    writeFileSync(hook, `#!/bin/sh\ntouch '${marker}'\n`);
    chmodSync(hook, 0o755);
    const head = await git(['--git-dir', bare, 'rev-parse', 'HEAD']);
    await git(['--git-dir', bare, 'update-ref', 'refs/heads/other', head]);
    assert.equal(existsSync(marker), false, 'the hook ran');
  });

  it('uses no transport the caller did not name', async () => {
    const refused = await runGit(['clone', '-q', '--mirror', bare, path.join(tmp, 'mirror-1')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /transport 'file' not allowed/);
    const ext = await runGit(['clone', '-q', '--mirror', `ext::sh -c touch% ${path.join(tmp, 'ext-ran')}`, path.join(tmp, 'mirror-2')], { protocols: ['https'] });
    assert.notEqual(ext.code, 0);
    assert.equal(existsSync(path.join(tmp, 'ext-ran')), false);
    const allowed = await runGit(['clone', '-q', '--mirror', bare, path.join(tmp, 'mirror-3')], { protocols: ['file'] });
    assert.equal(allowed.code, 0, allowed.stderr);
  });

  it('keeps its fixed variables whatever a caller passes', () => {
    const env = gitEnvironment({ env: { GIT_CONFIG_NOSYSTEM: '0', GIT_ALLOW_PROTOCOL: 'ext', HOME: '/root', GIT_CONFIG_COUNT: '0' }, config: { 'http.followRedirects': 'false' }, protocols: ['https'] });
    assert.equal(env.GIT_CONFIG_NOSYSTEM, '1');
    assert.equal(env.GIT_CONFIG_GLOBAL, '/dev/null');
    assert.equal(env.GIT_ALLOW_PROTOCOL, 'https');
    assert.equal(env.HOME, '/nonexistent');
    const settings = Object.fromEntries(Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]));
    assert.deepEqual(settings, { 'http.followRedirects': 'false', 'core.hooksPath': '/dev/null', 'core.fsmonitor': 'false', 'credential.helper': '' });
    assert.equal(Object.keys(env).some((k) => k === 'GIT_DIR' || k === 'GIT_CONFIG_PARAMETERS'), false);
  });

  it('runs hooks only from the server\'s own folder, named as such, never from a setting a caller passes', () => {
    const hooksPath = (env: Record<string, string>) => Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]).filter(([key]) => key === 'core.hooksPath');
    assert.deepEqual(hooksPath(gitEnvironment({ config: { 'core.hooksPath': tmp } })), [['core.hooksPath', '/dev/null']]);
    assert.deepEqual(hooksPath(gitEnvironment({ config: { 'core.hooksPath': '/tmp' }, hooksDir: tmp })), [['core.hooksPath', tmp]]);
  });

  it('is the only way src/ starts git (the CLI\'s own git, on the user\'s machine, aside)', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url));
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (file.endsWith('.ts') && !file.endsWith(path.join('git', 'spawn-git.ts')) && !file.endsWith(path.join('cli', 'dataset-git.ts'))) {
          if (/spawn(Sync)?\(\s*['"]git['"]|exec(File)?(Sync)?\(\s*['"]git['"]/.test(readFileSync(file, 'utf8'))) offenders.push(path.relative(src, file));
        }
      }
    };
    walk(src);
    assert.deepEqual(offenders, []);
  });
});

describe('limits of a git run', () => {
  let bare: string;
  before(() => {
    bare = mkdtempSync(path.join(os.tmpdir(), 'nds-git-limits-'));
    execFileSync('git', ['init', '-q', '--bare', bare]);
  });
  after(() => rmSync(bare, { recursive: true, force: true }));

  /** `git index-pack --stdin` of `pack` under `limits`: how it ended, and what it said. */
  const indexPack = (pack: Buffer, limits: ProcessLimits) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
      const child = spawnGit(['--git-dir', bare, 'index-pack', '--stdin'], { limits });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout.resume();
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal, stderr }));
      child.stdin.on('error', () => {});
      child.stdin.end(pack);
    });

  // A delta of 20 KB builds a gigabyte: without a bound, git allocates and fills all of it.
  it('refuses git memory past `dataBytes`: an allocation fails and git stops', async () => {
    const ended = await indexPack(deltaBombPack(64).pack, { dataBytes: 256 * 1024 ** 2, cpuSeconds: 60 });
    assert.notEqual(ended.code, 0);
    assert.match(ended.stderr, /Out of memory, malloc failed/);
  });

  // A blob of 4 GiB of zeros is a pack of 4 MB, and seconds of CPU to inflate and hash.
  it('ends git past `cpuSeconds` of CPU time', async () => {
    const ended = await indexPack(zeroBlobPack(4 * 1024 ** 3), { dataBytes: 1024 ** 3, cpuSeconds: 1 });
    assert.ok(ended.signal === 'SIGKILL' || ended.signal === 'SIGXCPU', `git ended with ${ended.code ?? ended.signal}: ${ended.stderr}`);
  });
});
