/**
 * The push rule (docs/operating-zarr.md), as a pure decision over a GitHub push payload: convert when a
 * push to `main` of a dataset's repository added, modified or removed a data file or an `_events.tsv`.
 */
import { isConversionRelevantPath } from '../formats/bids/is-conversion-relevant-path.js';

export interface PushPayload {
  ref?: string;
  deleted?: boolean;
  after?: string;
  repository?: { full_name?: string; html_url?: string; clone_url?: string; ssh_url?: string };
  commits?: Array<{ added?: string[]; modified?: string[]; removed?: string[] }>;
  head_commit?: { added?: string[]; modified?: string[]; removed?: string[] } | null;
}

export type PushDecision =
  | { dispatched: true; reason: 'data_changed'; paths: string[] }
  | { dispatched: false; reason: 'not_a_push' | 'unknown_repository' | 'not_main_branch' | 'branch_deleted' | 'no_relevant_change' };

/** Every path a push touched, over all its commits (and the head commit, which GitHub repeats). */
export function touchedPaths(payload: PushPayload): string[] {
  const seen = new Set<string>();
  for (const c of [...(payload.commits ?? []), ...(payload.head_commit ? [payload.head_commit] : [])]) {
    for (const list of [c.added, c.modified, c.removed]) for (const p of list ?? []) if (typeof p === 'string') seen.add(p);
  }
  return [...seen].sort();
}

export function decidePush(event: string | undefined, payload: PushPayload, datasetKnown: boolean): PushDecision {
  if (event !== 'push') return { dispatched: false, reason: 'not_a_push' };
  if (!datasetKnown) return { dispatched: false, reason: 'unknown_repository' };
  if (payload.ref !== 'refs/heads/main') return { dispatched: false, reason: 'not_main_branch' };
  if (payload.deleted === true || /^0{40}$/.test(payload.after ?? '')) return { dispatched: false, reason: 'branch_deleted' };
  const paths = touchedPaths(payload).filter(isConversionRelevantPath);
  if (paths.length === 0) return { dispatched: false, reason: 'no_relevant_change' };
  return { dispatched: true, reason: 'data_changed', paths };
}

/** Forms under which a dataset may name its repository: `https://github.com/o/n(.git)`, `o/n`, `github:o/n`. */
export function repositoryKeys(repo: PushPayload['repository']): string[] {
  const keys = new Set<string>();
  const add = (v: string | undefined) => {
    if (!v) return;
    const norm = v.trim().toLowerCase().replace(/\.git$/, '').replace(/\/+$/, '');
    keys.add(norm);
  };
  add(repo?.full_name);
  add(repo?.html_url);
  add(repo?.clone_url);
  add(repo?.ssh_url);
  if (repo?.full_name) keys.add(`github:${repo.full_name.toLowerCase()}`);
  return [...keys];
}
