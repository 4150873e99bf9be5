/**
 * A push to a dataset's hosted repository is a push event: when `main` moved, the push rule decides, over
 * the paths the push changed, whether to dispatch a conversion.
 */
import type { Deps } from '../deps.js';
import { eachGitRecord, GitOutputTooLargeError } from '../git/run-git.js';
import { isConversionRelevantPath } from '../formats/bids/is-conversion-relevant-path.js';
import { mainHead } from '../datasets/hosted-repository.js';
import { dispatchConversion } from './dispatch.js';
import { decidePush, type PushDecision } from './push-rule.js';

/** git's well-known empty tree: the diff base of a branch's first push. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** After a push: when `main` moved, apply the push rule to the changed paths and dispatch a conversion. */
export async function afterPush(deps: Deps, datasetId: string, dir: string, before: string | undefined): Promise<PushDecision | undefined> {
  const after = await mainHead(dir);
  if (after === before) return undefined;
  // The paths are read one at a time, up to the first the push rule converts for: a pushed tree may list
  // millions of paths from a few kilobytes. A push past the limit is converted, and its owner told why it fails.
  let relevant: string | undefined;
  let tooMany = false;
  if (after) {
    const range = before ? [before, after] : [EMPTY_TREE, after];
    try {
      await eachGitRecord(['--git-dir', dir, 'diff', '--name-only', '--no-renames', '-z', ...range], { separator: '\0', limit: deps.config.maxTreeFiles }, (p) => {
        if (!isConversionRelevantPath(p)) return true;
        relevant = p;
        return false;
      });
    } catch (err) {
      if (!(err instanceof GitOutputTooLargeError)) throw err;
      tooMany = true;
    }
  }
  const decision: PushDecision =
    tooMany && after
      ? { dispatched: true, reason: 'data_changed', paths: [] }
      : decidePush('push', { ref: 'refs/heads/main', after: after ?? '0'.repeat(40), deleted: !after, commits: [{ modified: relevant ? [relevant] : [] }] }, true);
  deps.log.info({ dataset: datasetId, before, after, dispatched: decision.dispatched, reason: decision.reason }, 'push received');
  if (decision.dispatched && after) await dispatchConversion(deps, { datasetId, ref: after, full: false, reason: 'push' });
  return decision;
}
