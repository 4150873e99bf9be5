import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from './accounts-tables.js';

/** A time span of one recording with a label (`annotations/annotation-queries.ts` owns the three tables). */
export interface AnnotationsTable {
  /** A random UUID. */
  id: string;
  dataset_id: string;
  /** The recording's data file, relative to the dataset root (as `/signal` names it). */
  path: string;
  /** Seconds from the recording's start. */
  onset: number;
  duration: number;
  /** Channel labels it applies to; null for all. */
  channels: ColumnType<string[] | null, string[] | null, string[] | null>;
  label: string;
  /** A HED string. */
  hed: string | null;
  note: string | null;
  /** Null once the author's account is gone. */
  author_id: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The revision of one recording's annotations: moved by every change, compared by `If-Match`. */
export interface AnnotationRevisionsTable {
  dataset_id: string;
  path: string;
  revision: number;
}

/** What an annotation looked like before or after a change, as kept in the history. */
export interface AnnotationSnapshot {
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
  hed: string | null;
  note: string | null;
  author_id: number | null;
}

export type AnnotationAction = 'create' | 'update' | 'delete';

/** One change of one annotation, kept forever with the revision it made. */
export interface AnnotationChangesTable {
  id: Generated<string>;
  dataset_id: string;
  path: string;
  revision: number;
  annotation_id: string;
  action: AnnotationAction;
  before: Json<AnnotationSnapshot | null>;
  after: Json<AnnotationSnapshot | null>;
  author_id: number | null;
  changed_at: Timestamp;
}

export interface AnnotationsTables {
  annotations: AnnotationsTable;
  annotation_revisions: AnnotationRevisionsTable;
  annotation_changes: AnnotationChangesTable;
}

export type AnnotationRow = Selectable<AnnotationsTable>;
export type AnnotationChangeRow = Selectable<AnnotationChangesTable>;
