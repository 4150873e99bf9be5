/** Request and response schemas of the annotation routes (docs/api.md, "Annotations"; decision 0028). */
import { z } from '@hono/zod-openapi';
import { MAX_ANNOTATIONS_A_REQUEST } from '../annotations/annotations.js';
import { IdParam, lineText, paragraphText } from './dataset-schemas.js';

/** The largest revision a recording can reach: revisions are PostgreSQL `integer`s, and a larger one is no query parameter. */
const MAX_REVISION = 2_147_483_647;

const RecordingPath = z.string().min(1).max(1000).openapi({ description: 'The recording: its data file (as `/signal` and `GET /recordings` name it), or its store folder' });
const Label = lineText(200).min(1);
const Channels = z.array(z.string().min(1).max(100)).min(1).max(4096).nullable();

const AnnotationFields = {
  onset: z.number().min(0).max(1e9).openapi({ description: "Seconds from the recording's start" }),
  duration: z.number().min(0).max(1e9).openapi({ description: 'Seconds; 0 for an instant' }),
  channels: Channels.optional().openapi({ description: 'Channel labels it applies to; null or absent for all' }),
  label: Label.openapi({ description: 'What it marks (the `trial_type` of the export)', example: 'seizure' }),
  // Controls refused as in a label: the HED string goes into the events files readers download and diff. A note may
  // run over lines; the commit message too (below).
  hed: lineText(2000).nullable().optional().openapi({ description: 'A HED annotation string (one line)' }),
  note: paragraphText(2000).nullable().optional().openapi({ description: 'Free text; line breaks and tabs are kept' }),
};

export const NewAnnotation = z.object({ path: RecordingPath, ...AnnotationFields }).openapi('NewAnnotation');

export const NewAnnotationsBody = z
  .union([NewAnnotation, z.array(NewAnnotation).min(1).max(MAX_ANNOTATIONS_A_REQUEST)])
  .openapi({ description: `One annotation, or up to ${MAX_ANNOTATIONS_A_REQUEST} of one recording (an import)` });

export const AnnotationPatchBody = z
  .object({
    onset: AnnotationFields.onset.optional(),
    duration: AnnotationFields.duration.optional(),
    channels: Channels.optional(),
    label: Label.optional(),
    hed: AnnotationFields.hed,
    note: AnnotationFields.note,
  })
  .strict()
  .openapi('AnnotationPatch');

export const AnnotationSchema = z
  .object({
    id: z.string(),
    onset: z.number(),
    duration: z.number(),
    channels: z.array(z.string()).nullable(),
    label: z.string(),
    hed: z.string().nullable(),
    note: z.string().nullable(),
    author: z.string().nullable().openapi({ description: "The author's username; null once the account is gone" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Annotation');

const Revision = z.number().int().openapi({ description: "The recording's revision after this answer: send it back as `If-Match` with a change; also the `ETag`" });

export const AnnotationList = z.object({ annotations: z.array(AnnotationSchema), revision: Revision }).openapi('Annotations');
export const AnnotationWrite = z.object({ annotation: AnnotationSchema, revision: Revision });

const Snapshot = z
  .object({ onset: z.number(), duration: z.number(), channels: z.array(z.string()).nullable(), label: z.string(), hed: z.string().nullable(), note: z.string().nullable() })
  .nullable();

export const AnnotationHistory = z
  .object({
    changes: z.array(
      z.object({
        revision: z.number().int(),
        annotation_id: z.string(),
        action: z.enum(['create', 'update', 'delete']),
        before: Snapshot.openapi({ description: 'null when created' }),
        after: Snapshot.openapi({ description: 'null when deleted' }),
        author: z.string().nullable(),
        changed_at: z.string(),
      }),
    ),
    revision: Revision,
  })
  .openapi('AnnotationHistory');

export const AnnotationLabels = z
  .object({
    labels: z.array(
      z.object({
        label: z.string(),
        count: z.number().int().openapi({ description: 'Annotations with this label, on all the recordings' }),
        recordings: z.number().int().openapi({ description: 'Recordings with at least one of them' }),
      }),
    ),
  })
  .openapi('AnnotationLabels');

export const RecordingQuery = z.object({ path: RecordingPath });
export const HistoryQuery = z.object({
  path: RecordingPath,
  after: z.coerce.number().int().min(0).max(MAX_REVISION).default(0).openapi({ description: 'Only the changes after this revision (a client catching up)' }),
});
export const ExportQuery = z.object({ path: RecordingPath, format: z.enum(['tsv']).default('tsv') });

export const AnnotationParams = IdParam.extend({
  annotationId: z.string().uuid().openapi({ param: { name: 'annotationId', in: 'path' } }),
});

export const CommitBody = z.object({ message: paragraphText(2000).min(1).openapi({ description: 'What the version brings, written at the top of `CHANGES`' }) }).openapi('AnnotationCommit');
export const CommitAnswer = z
  .object({
    version: z.string(),
    files: z.array(z.string()),
    annotations: z.number().int(),
    commit: z.string().optional().openapi({ description: 'The commit made on main, when the dataset\'s source is its hosted repository' }),
  })
  .openapi('AnnotationCommitted');
