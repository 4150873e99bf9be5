/**
 * Datasets' hosted git repositories: bare repositories under `GIT_DIR_ROOT` (default `<DATA_DIR>/git`) of the
 * node that holds each one, served by git smart HTTP at `<PUBLIC_URL>/git/<id>.git` (a push to `main` is
 * handled by `conversion/after-push.ts`). Nodes share no disk (decision 0026): the node that receives a
 * dataset's first push creates its repository and is recorded as its holder (`repository-holders.ts`); every
 * other node forwards the repository's requests to the holder's NODE_URL.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { git, runGit } from '../git/run-git.js';
import { repositoryDir } from '../git/repository-dir.js';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { datasetExists, setSourceRepo } from './dataset-queries.js';
import { DATASET_ID } from './dataset-access.js';
import { claimRepository, repositoryHolder } from './repository-holders.js';
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
 * Where a dataset's repository is: in a folder of this node, at another node (its NODE_URL), or nowhere yet.
 * A push (`creating`) makes it here when no node holds it; a repository found on this node's disk that no
 * node holds (pushed before holders were recorded) becomes this node's.
 */
export type RepositoryPlace = { at: 'here'; dir: string } | { at: 'node'; nodeUrl: string } | { at: 'none' };

export async function locateRepository(deps: Pick<Deps, 'db' | 'config' | 'clock'>, datasetId: string, creating: boolean): Promise<RepositoryPlace> {
  const { db, config } = deps;
  const dir = repositoryDir(config.gitDir, datasetId);
  let holder = await repositoryHolder(db, datasetId);
  if (holder === undefined && (creating || existsSync(dir))) holder = await claimRepository(db, datasetId, config.nodeUrl, deps.clock.now());
  if (holder === undefined) return { at: 'none' };
  if (holder !== config.nodeUrl) return { at: 'node', nodeUrl: holder };
  if (creating) return { at: 'here', dir: await ensureRepository(config.gitDir, datasetId) };
  return existsSync(dir) ? { at: 'here', dir } : { at: 'none' };
}

/**
 * On a push: a dataset without a source repository gets its hosted one as its `source_repo`, so its
 * conversions follow pushes from then on.
 */
export async function markHostedSource(deps: Pick<Deps, 'db'>, dataset: Pick<DatasetRow, 'id' | 'source_repo'>): Promise<void> {
  if (!dataset.source_repo) await setSourceRepo(deps.db, dataset.id, HOSTED_SOURCE);
}

export async function mainHead(dir: string): Promise<string | undefined> {
  const r = await runGit(['--git-dir', dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

/** The ids of the datasets whose repository is on this node's disk (`<id>.git` folders under GIT_DIR_ROOT). */
export async function repositoriesOnDisk(gitDir: string): Promise<string[]> {
  const names = await readdir(gitDir).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.git')).map((name) => name.slice(0, -'.git'.length)).filter((id) => DATASET_ID.test(id));
}

/**
 * Removes the repositories on this node's disk whose dataset was deleted. The deletion removes the folder on
 * the node that ran it; the holder, when another node, finds it here at its next start. Dataset ids are never
 * given twice, so such a folder can only be left over.
 */
export async function removeDeletedRepositories(deps: Pick<Deps, 'db' | 'config' | 'log'>): Promise<number> {
  let removed = 0;
  for (const id of await repositoriesOnDisk(deps.config.gitDir)) {
    if (await datasetExists(deps.db, id)) continue;
    await rm(repositoryDir(deps.config.gitDir, id), { recursive: true, force: true });
    removed++;
  }
  if (removed > 0) deps.log.info({ removed }, 'repositories of deleted datasets removed');
  return removed;
}
