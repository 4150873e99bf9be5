/**
 * Sandbox training (docs/datasets.md): `not_started` → `in_progress` (the account has a sandbox dataset) →
 * `completed` (`users.sandbox_completed_at`). Completing needs a sandbox dataset with a version and, when
 * a conversion was started for it, a ready Zarr copy. Reset forgets the completion and deletes the
 * account's sandbox datasets, so the training can be taken again from the start.
 */
import type { Actor } from '../accounts/admin-users.js';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { listSandboxDatasets, type SandboxDatasetSummary } from '../datasets/dataset-queries.js';
import { deleteDataset } from '../datasets/delete-dataset.js';

export type SandboxState = 'not_started' | 'in_progress' | 'completed';

export interface SandboxStatus {
  status: SandboxState;
  completed_at: Date | null;
  datasets: SandboxDatasetSummary[];
  /** What is left to do, in a sentence; null once completed. */
  next_step: string | null;
}

/** A sandbox dataset that counts for completion: it has a version, and its Zarr copy, if any was started, is ready. */
function finished(d: SandboxDatasetSummary): boolean {
  return d.latest_version !== null && (d.zarr_status === null || d.zarr_status === 'ready');
}

function nextStep(datasets: SandboxDatasetSummary[]): string {
  if (datasets.length === 0) return 'Create a sandbox dataset: nds datasets create "<name>".';
  if (datasets.every((d) => d.latest_version === null)) return `Upload files to ${datasets[0].id} and create a version: nds datasets upload ${datasets[0].id} <folder>.`;
  const waiting = datasets.find((d) => d.latest_version !== null && d.zarr_status !== null && d.zarr_status !== 'ready');
  if (waiting && !datasets.some(finished)) return `Wait for the Zarr copy of ${waiting.id} to be ready (now ${waiting.zarr_status}).`;
  return 'Mark the training complete: nds sandbox complete.';
}

export async function sandboxStatus(deps: Pick<Deps, 'db'>, user: User): Promise<SandboxStatus> {
  const fresh = await deps.db.selectFrom('users').select('sandbox_completed_at').where('id', '=', user.id).executeTakeFirstOrThrow();
  const datasets = await listSandboxDatasets(deps.db, user.id);
  if (fresh.sandbox_completed_at) return { status: 'completed', completed_at: fresh.sandbox_completed_at, datasets, next_step: null };
  return { status: datasets.length ? 'in_progress' : 'not_started', completed_at: null, datasets, next_step: nextStep(datasets) };
}

/** Marks the training complete; 409 `conflict` saying what is missing when no sandbox dataset qualifies. Idempotent. */
export async function completeSandbox(deps: Pick<Deps, 'db' | 'clock'>, user: User): Promise<SandboxStatus> {
  const current = await sandboxStatus(deps, user);
  if (current.status === 'completed') return current;
  if (!current.datasets.some(finished)) {
    throw new NdsError('conflict', {
      message: `The sandbox training is not finished: ${current.next_step}`,
      details: current.datasets.map((d) => `${d.id}: ${d.latest_version ? `version ${d.latest_version}, zarr ${d.zarr_status ?? 'not converted'}` : 'no version yet'}`),
      extra: { status: current.status },
    });
  }
  const now = deps.clock.now();
  await deps.db.updateTable('users').set({ sandbox_completed_at: now, updated_at: now }).where('id', '=', user.id).where('sandbox_completed_at', 'is', null).execute();
  return sandboxStatus(deps, user);
}

/** Forgets the completion and deletes the account's sandbox datasets with their objects. */
export async function resetSandbox(deps: Pick<Deps, 'db' | 'objects' | 'hooks' | 'log' | 'config' | 'clock'>, actor: Actor): Promise<SandboxStatus & { deleted: string[] }> {
  const datasets = await listSandboxDatasets(deps.db, actor.user.id);
  for (const d of datasets) await deleteDataset(deps, actor, d.id);
  await deps.db.updateTable('users').set({ sandbox_completed_at: null, updated_at: deps.clock.now() }).where('id', '=', actor.user.id).execute();
  return { ...(await sandboxStatus(deps, actor.user)), deleted: datasets.map((d) => d.id) };
}
