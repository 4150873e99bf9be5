/**
 * Datasets' hosted git repositories: bare repositories under `GIT_DIR_ROOT` (default `<DATA_DIR>/git`),
 * served by git smart HTTP at `<PUBLIC_URL>/git/<id>.git`. A push to `main` is a push event: the push rule
 * decides, over the paths the push changed, whether to dispatch a conversion.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { dispatchConversion } from '../conversion/dispatch.js';
import { git, runGit } from '../git/run-git.js';
import { decidePush, type PushDecision } from '../conversion/push-rule.js';
import type { Deps } from '../deps.js';
import { repositoryDir } from '../git/repository-dir.js';

export { repositoryDir };

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

export async function mainHead(dir: string): Promise<string | undefined> {
  const r = await runGit(['--git-dir', dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

/** After a push: when `main` moved, apply the push rule to the changed paths and dispatch a conversion. */
export async function afterPush(deps: Deps, datasetId: string, dir: string, before: string | undefined): Promise<PushDecision | undefined> {
  const after = await mainHead(dir);
  if (after === before) return undefined;
  let paths: string[] = [];
  if (after) {
    const range = before ? [before, after] : ['4b825dc642cb6eb9a060e54bf8d69288fbee4904', after];
    const out = await git(['--git-dir', dir, 'diff', '--name-only', '--no-renames', ...range]);
    paths = out ? out.split('\n') : [];
  }
  const decision = decidePush('push', { ref: 'refs/heads/main', after: after ?? '0'.repeat(40), deleted: !after, commits: [{ modified: paths }] }, true);
  deps.log.info({ dataset: datasetId, before, after, dispatched: decision.dispatched, reason: decision.reason }, 'push received');
  if (decision.dispatched && after) await dispatchConversion(deps, { datasetId, ref: after, full: false, reason: 'push' });
  return decision;
}
