/** A BIDS dataset in a real git repository, built from the test fixtures, for pipeline tests. */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repositoryDir } from '../../src/git/repository-dir.js';
import { HOSTED_SOURCE } from '../../src/datasets/source-repo.js';
import { fixturesDir } from '../formats/support/fixtures.js';

export const fixtures = fixturesDir;

export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/** A repository with two EMG recordings (one EDF of CustomBipolar, one plain EDF with mixed rates). */
export function makeBidsRepo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-bids-repo-'));
  cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), dir, { recursive: true });
  const sub2 = path.join(dir, 'sub-02/eeg');
  mkdirSync(sub2, { recursive: true });
  cpSync(path.join(fixtures, 'mne-python/edf/test_uneven_samp.edf'), path.join(sub2, 'sub-02_task-rest_eeg.edf'));
  writeFileSync(path.join(sub2, 'sub-02_task-rest_events.tsv'), 'onset\tduration\ttrial_type\n1.5\t0\tblink\n');
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

/**
 * Makes the repository `repo` the hosted repository of dataset `id` (moved into `gitDir`, GIT_DIR_ROOT), as a
 * push would: the dataset's `source_repo` is then `hosted` (`hostedSource`). Returns the repository's new
 * folder, where later commits of the test go.
 */
export function hostRepository(gitDir: string, id: string, repo: string): string {
  const dir = repositoryDir(gitDir, id);
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(repo, dir);
  return dir;
}

/** A bare copy of `repo` as the hosted repository of dataset `id` (for several datasets of one source). */
export function hostCopy(gitDir: string, id: string, repo: string): void {
  const dir = repositoryDir(gitDir, id);
  mkdirSync(path.dirname(dir), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', repo, dir]);
}

/** The `source_repo` of a dataset whose repository is its hosted one. */
export const hostedSource = HOSTED_SOURCE;

export function signGithub(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function pushPayload(repoFullName: string, after: string, paths: { added?: string[]; modified?: string[]; removed?: string[] }, ref = 'refs/heads/main') {
  return {
    ref,
    after,
    deleted: false,
    repository: { full_name: repoFullName, html_url: `https://github.com/${repoFullName}`, clone_url: `https://github.com/${repoFullName}.git` },
    commits: [{ added: paths.added ?? [], modified: paths.modified ?? [], removed: paths.removed ?? [] }],
  };
}
