/**
 * Datasets' hosted git repositories: bare repositories under `GIT_DIR_ROOT` (default `<DATA_DIR>/git`),
 * served by git smart HTTP at `<PUBLIC_URL>/git/<id>.git` (a push to `main` is handled by
 * `conversion/after-push.ts`).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { git, runGit } from '../git/run-git.js';
import { repositoryDir } from '../git/repository-dir.js';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { setSourceRepo } from './dataset-queries.js';
import { HOSTED_SOURCE } from './source-repo.js';

/** Creates the bare repository of a dataset if it does not exist yet (branch `main`, pushes allowed). */
export async function ensureRepository(gitDir: string, datasetId: string): Promise<string> {
  const dir = repositoryDir(gitDir, datasetId);
  if (!existsSync(path.join(dir, 'HEAD'))) {
    await mkdir(dir, { recursive: true });
    await git(['init', '--quiet', '--bare', '--initial-branch=main', dir]);
    await git(['--git-dir', dir, 'config', 'http.receivepack', 'true']);
  }
  return dir;
}

/**
 * The repository a push goes to, created on the first push; a dataset without a source repository gets
 * this one as its `source_repo`, so its conversions follow pushes from then on.
 */
export async function repositoryForPush(deps: Pick<Deps, 'db' | 'config'>, dataset: Pick<DatasetRow, 'id' | 'source_repo'>): Promise<string> {
  const dir = await ensureRepository(deps.config.gitDir, dataset.id);
  if (!dataset.source_repo) await setSourceRepo(deps.db, dataset.id, HOSTED_SOURCE);
  return dir;
}

export async function mainHead(dir: string): Promise<string | undefined> {
  const r = await runGit(['--git-dir', dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}
