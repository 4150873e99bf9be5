/**
 * Annotations of a recording (docs/workspace.md, "Members and annotations"; decision 0028): read by whoever
 * reads the dataset, written by its annotators, maintainers, owner and admins. An annotator edits and deletes
 * their own; maintainers, the owner and admins any. Every change moves the recording's revision and is kept
 * with its author and time; a change based on another revision than the current one (`If-Match`) is refused
 * with 409 `revision_conflict`, so of concurrent edits from one revision exactly one wins.
 */
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { AnnotationChangesTable, AnnotationSnapshot } from '../db/annotations-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { allows, datasetFor, datasetForWhile } from '../datasets/dataset-access.js';
import { findRecordingRow, type RecordingRow } from '../recordings/catalogue-queries.js';
import {
  annotationLabelUses,
  claimRevision,
  countAnnotationRows,
  deleteAnnotationRow,
  findAnnotationRow,
  insertAnnotationRows,
  insertChangeRows,
  listAnnotationRows,
  listChangeRows,
  recordingRevision,
  updateAnnotationRow,
  type AnnotationListing,
  type ChangeListing,
  type LabelUse,
} from './annotation-queries.js';

/** Most annotations one POST creates (an import of a recording's marks). */
export const MAX_ANNOTATIONS_A_REQUEST = 10_000;

/**
 * Most annotations one recording holds: what the viewer is built and benchmarked for, and so the bound of what
 * one `GET` of a recording's annotations (or its export) reads and answers.
 */
export const MAX_ANNOTATIONS_A_RECORDING = 100_000;

export interface AnnotationInput {
  onset: number;
  duration: number;
  /** Channel labels of the recording; null or absent for all. */
  channels?: string[] | null | undefined;
  label: string;
  hed?: string | null | undefined;
  note?: string | null | undefined;
}

export interface PresentedAnnotation {
  id: string;
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
  hed: string | null;
  note: string | null;
  author: string | null;
  created_at: string;
  updated_at: string;
}

export function presentAnnotation(a: AnnotationListing): PresentedAnnotation {
  return {
    id: a.id,
    onset: a.onset,
    duration: a.duration,
    channels: a.channels,
    label: a.label,
    hed: a.hed,
    note: a.note,
    author: a.author,
    created_at: new Date(a.created_at).toISOString(),
    updated_at: new Date(a.updated_at).toISOString(),
  };
}

type AnnotationDeps = Pick<Deps, 'db' | 'clock'>;

/** The recording at `path` (its data file or store folder) of a dataset `user` may read, or `not_found`. */
async function readableRecording(deps: Pick<Deps, 'db'>, user: User | undefined, datasetId: string, path: string, right: 'read' | 'annotate') {
  const access = await datasetFor(deps.db, datasetId, user, right);
  const recording = await findRecordingRow(deps.db, datasetId, path);
  if (!recording) throw new NdsError('not_found', { message: `No converted recording at ${path} in ${datasetId}.` });
  return { ...access, recording };
}

/** One recording's annotations, by onset, and its revision. */
export async function readAnnotations(deps: Pick<Deps, 'db'>, user: User | undefined, datasetId: string, path: string): Promise<{ annotations: PresentedAnnotation[]; revision: number }> {
  const { recording } = await readableRecording(deps, user, datasetId, path, 'read');
  // The revision first: annotations read after it are at least that new, so a client's If-Match never skips a change.
  const revision = await recordingRevision(deps.db, datasetId, recording.path);
  const rows = await listAnnotationRows(deps.db, datasetId, recording.path);
  return { annotations: rows.map(presentAnnotation), revision };
}

/** Most labels `GET /datasets/:id/annotations/labels` answers. */
export const MAX_LABELS = 1000;

/**
 * The labels of the dataset's annotations on all its recordings, most used first: what the viewer offers
 * when one is chosen. Whoever reads the dataset reads them; anyone else gets what an unknown id gets.
 */
export async function annotationLabels(deps: Pick<Deps, 'db'>, user: User | undefined, datasetId: string): Promise<{ labels: LabelUse[] }> {
  await datasetFor(deps.db, datasetId, user, 'read');
  return { labels: await annotationLabelUses(deps.db, datasetId, MAX_LABELS) };
}

/** The recording's kept changes, oldest first, after revision `after`. */
export async function annotationHistory(deps: Pick<Deps, 'db'>, user: User | undefined, datasetId: string, path: string, after = 0, limit = 10_000): Promise<{ changes: ChangeListing[]; revision: number }> {
  const { recording } = await readableRecording(deps, user, datasetId, path, 'read');
  const revision = await recordingRevision(deps.db, datasetId, recording.path);
  return { changes: await listChangeRows(deps.db, datasetId, recording.path, after, limit), revision };
}

function checkAgainst(recording: RecordingRow, a: AnnotationInput, where: string): string[] {
  const problems: string[] = [];
  if (!Number.isFinite(a.onset) || a.onset < 0) problems.push(`${where}onset: seconds from the recording's start, at least 0`);
  if (!Number.isFinite(a.duration) || a.duration < 0) problems.push(`${where}duration: seconds, at least 0`);
  // A little slack for rounding in clients that compute onsets from samples.
  if (a.onset + a.duration > recording.duration_s + 1e-6) problems.push(`${where}onset + duration: past the recording's end (${recording.duration_s} s)`);
  if (a.channels) {
    const known = new Set(recording.channel_labels);
    const unknown = a.channels.filter((ch) => !known.has(ch));
    if (unknown.length) problems.push(`${where}channels: not channels of this recording: ${unknown.slice(0, 5).join(', ')}`);
  }
  return problems;
}

function snapshot(a: Pick<AnnotationListing, 'onset' | 'duration' | 'channels' | 'label' | 'hed' | 'note' | 'author_id'>): AnnotationSnapshot {
  return { onset: a.onset, duration: a.duration, channels: a.channels, label: a.label, hed: a.hed, note: a.note, author_id: a.author_id };
}

function conflict(expected: number): NdsError {
  return new NdsError('revision_conflict', { message: `The annotations are no longer at revision ${expected}; read them again and retry.` });
}

function change(datasetId: string, path: string, revision: number, user: User, now: Date, annotationId: string, action: 'create' | 'update' | 'delete', before: AnnotationSnapshot | null, after: AnnotationSnapshot | null): Insertable<AnnotationChangesTable> {
  return { dataset_id: datasetId, path, revision, annotation_id: annotationId, action, before: JSON.stringify(before), after: JSON.stringify(after), author_id: user.id, changed_at: now };
}

/**
 * Creates annotations of one recording (all of one `path`), as one revision; `expected` is the client's
 * `If-Match` revision, if it sent one.
 */
export async function createAnnotations(deps: AnnotationDeps, user: User, datasetId: string, path: string, items: AnnotationInput[], expected: number | undefined): Promise<{ annotations: PresentedAnnotation[]; revision: number }> {
  if (items.length === 0) throw new NdsError('validation_failed', { details: ['body: at least one annotation'] });
  if (items.length > MAX_ANNOTATIONS_A_REQUEST) throw new NdsError('validation_failed', { details: [`body: at most ${MAX_ANNOTATIONS_A_REQUEST} annotations a request`] });
  const { recording } = await readableRecording(deps, user, datasetId, path, 'annotate');
  const problems = items.flatMap((a, i) => checkAgainst(recording, a, items.length > 1 ? `[${i}].` : ''));
  if (problems.length) throw new NdsError('validation_failed', { details: problems.slice(0, 100) });
  const now = deps.clock.now();
  const rows = items.map((a) => ({
    id: randomUUID(),
    dataset_id: datasetId,
    path: recording.path,
    onset: a.onset,
    duration: a.duration,
    channels: a.channels ?? null,
    label: a.label,
    hed: a.hed ?? null,
    note: a.note ?? null,
    author_id: user.id,
    created_at: now,
    updated_at: now,
  }));
  const revision = await deps.db.transaction().execute(async (trx) => {
    // Asked again under the dataset's shared lock: an annotator removed meanwhile writes nothing.
    await datasetForWhile(trx, datasetId, user, 'annotate', 'write');
    const claimed = await claimRevision(trx, datasetId, recording.path, expected);
    if (claimed === undefined) throw conflict(expected!);
    // Counted under the revision's row lock, which every change of this recording takes first: creations
    // racing each other are counted one after the other, so together they cannot pass the cap either.
    const held = await countAnnotationRows(trx, datasetId, recording.path);
    if (held + rows.length > MAX_ANNOTATIONS_A_RECORDING) {
      throw new NdsError('conflict', {
        message: `A recording holds at most ${MAX_ANNOTATIONS_A_RECORDING} annotations; ${recording.path} has ${held}, and these ${rows.length} would take it past that. Delete some first.`,
        extra: { limit: MAX_ANNOTATIONS_A_RECORDING, held },
      });
    }
    await insertAnnotationRows(trx, rows);
    await insertChangeRows(trx, rows.map((r) => change(datasetId, recording.path, claimed, user, now, r.id, 'create', null, snapshot(r))));
    return claimed;
  });
  return { annotations: rows.map((r) => presentAnnotation({ ...r, author: user.username })), revision };
}

/**
 * The annotation when `user` may change it: its author (annotators and up), or anyone who maintains the dataset.
 * Asked before a change's transaction, and again inside it (`datasetForWhile`), where the answer holds.
 */
async function changeableAnnotation(db: Kysely<Database>, user: User, datasetId: string, annotationId: string, lock?: 'write'): Promise<AnnotationListing> {
  const { standing } = lock ? await datasetForWhile(db, datasetId, user, 'annotate', lock) : await datasetFor(db, datasetId, user, 'annotate');
  const found = await findAnnotationRow(db, datasetId, annotationId);
  if (!found) throw new NdsError('annotation_not_found', { message: `No annotation ${annotationId} in ${datasetId}.` });
  if (found.author_id !== user.id && !allows(standing, 'maintain')) {
    throw new NdsError('forbidden', { message: 'An annotator changes their own annotations; maintainers and the owner change any.' });
  }
  return found;
}

export type AnnotationPatch = Partial<AnnotationInput>;

/** Changes one annotation, as one revision of its recording. */
export async function updateAnnotation(deps: AnnotationDeps, user: User, datasetId: string, annotationId: string, patch: AnnotationPatch, expected: number | undefined): Promise<{ annotation: PresentedAnnotation; revision: number }> {
  const found = await changeableAnnotation(deps.db, user, datasetId, annotationId);
  const recording = (await findRecordingRow(deps.db, datasetId, found.path))!;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await changeableAnnotation(trx, user, datasetId, annotationId, 'write');
    const claimed = await claimRevision(trx, datasetId, found.path, expected);
    if (claimed === undefined) throw conflict(expected!);
    // Read again under the revision's lock: a change that won the race before this one is seen.
    const current = await findAnnotationRow(trx, datasetId, annotationId);
    if (!current) throw new NdsError('annotation_not_found', { message: `No annotation ${annotationId} in ${datasetId}.` });
    const next = {
      onset: patch.onset ?? current.onset,
      duration: patch.duration ?? current.duration,
      channels: patch.channels !== undefined ? patch.channels : current.channels,
      label: patch.label ?? current.label,
      hed: patch.hed !== undefined ? patch.hed : current.hed,
      note: patch.note !== undefined ? patch.note : current.note,
    };
    const problems = recording ? checkAgainst(recording, next, '') : [];
    if (problems.length) throw new NdsError('validation_failed', { details: problems });
    await updateAnnotationRow(trx, annotationId, { ...next, updated_at: now });
    await insertChangeRows(trx, [change(datasetId, found.path, claimed, user, now, annotationId, 'update', snapshot(current), snapshot({ ...next, author_id: current.author_id }))]);
    return { annotation: presentAnnotation({ ...current, ...next, updated_at: now }), revision: claimed };
  });
}

/** Deletes one annotation, as one revision of its recording; the history keeps what it was. */
export async function deleteAnnotation(deps: AnnotationDeps, user: User, datasetId: string, annotationId: string, expected: number | undefined): Promise<{ revision: number }> {
  const found = await changeableAnnotation(deps.db, user, datasetId, annotationId);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await changeableAnnotation(trx, user, datasetId, annotationId, 'write');
    const claimed = await claimRevision(trx, datasetId, found.path, expected);
    if (claimed === undefined) throw conflict(expected!);
    const current = await findAnnotationRow(trx, datasetId, annotationId);
    if (!current) throw new NdsError('annotation_not_found', { message: `No annotation ${annotationId} in ${datasetId}.` });
    await deleteAnnotationRow(trx, annotationId);
    await insertChangeRows(trx, [change(datasetId, found.path, claimed, user, now, annotationId, 'delete', snapshot(current), null)]);
    return { revision: claimed };
  });
}
