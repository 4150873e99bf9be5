/**
 * Annotations of recordings (docs/api.md, "Annotations"; decision 0028): read, create (one or an import of up
 * to 10,000; at most 100,000 a recording), change, delete, the history of every change, the BIDS `events.tsv` export, and the commit into
 * a new version. Changes answer the recording's new revision (also as `ETag`); with `If-Match: "<revision>"`
 * a change based on an older one is refused with 409.
 */
import type { Context } from 'hono';
import { commitAnnotations, commitMadeElsewhere, eventsPathOf } from '../annotations/annotation-commit.js';
import { annotationsTsv } from '../annotations/annotation-tsv.js';
import { annotationHistory, annotationLabels, createAnnotations, deleteAnnotation, MAX_ANNOTATIONS_A_RECORDING, readAnnotations, updateAnnotation } from '../annotations/annotations.js';
import { NdsError } from '../core/errors.js';
import type { AppEnv } from '../http/app-env.js';
import { callerOf } from '../http/auth.js';
import { attachmentDisposition } from '../http/content-disposition.js';
import { forwardToHolder } from '../http/holder-forwarding.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import {
  AnnotationHistory,
  AnnotationLabels,
  AnnotationList,
  AnnotationParams,
  AnnotationPatchBody,
  AnnotationWrite,
  CommitAnswer,
  CommitBody,
  ExportQuery,
  HistoryQuery,
  NewAnnotationsBody,
  RecordingQuery,
} from './annotation-schemas.js';
import { IdParam } from './dataset-schemas.js';

const ANNOTATIONS = `${DATASET_PATH}/annotations`;

/**
 * The revision of `If-Match` (RFC 9110 section 13.1.1): `"12"`, `W/"12"` or a bare 12; `*` and no header mean any.
 * Anything else is refused, so a client never believes it checked a revision it did not.
 */
export function ifMatchRevision(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!m) throw new NdsError('validation_failed', { details: ['If-Match: the revision of the annotations it is based on, such as "12"'] });
  return Number(m[1]);
}

function withRevision(c: Context<AppEnv>, revision: number): void {
  c.header('ETag', `"${revision}"`);
  c.header('Cache-Control', 'no-store');
}

const conflict = { 409: jsonResponse(errorResponses[409].content['application/json'].schema, 'revision_conflict: the annotations moved past the If-Match revision; read them again') };
const createConflict = {
  409: jsonResponse(errorResponses[409].content['application/json'].schema, `revision_conflict: the annotations moved past the If-Match revision; read them again. conflict: the recording would hold more than ${MAX_ANNOTATIONS_A_RECORDING} annotations (\`limit\`, \`held\`); nothing was written`),
};

export const annotationRoutes: Route[] = [
  route({
    method: 'get',
    path: ANNOTATIONS,
    summary: "One recording's annotations and its revision (whoever reads the dataset)",
    access: 'optional',
    params: IdParam,
    query: RecordingQuery,
    responses: { 200: jsonResponse(AnnotationList, 'The annotations by onset; ETag: the revision'), 404: errorResponses[404] },
    handler: async (c, { params, query }) => {
      const answer = await readAnnotations(c.var.deps, c.var.caller?.user, params.id, query.path);
      withRevision(c, answer.revision);
      return c.json(answer, 200);
    },
  }),

  route({
    method: 'post',
    path: ANNOTATIONS,
    summary: 'Annotate a recording: one annotation, or up to 10,000 of one recording (annotators, maintainers, the owner, admins)',
    access: 'any',
    params: IdParam,
    body: { schema: NewAnnotationsBody, maxBytes: 16 * 1024 * 1024, maxKeys: 1_000_000 },
    responses: { 201: jsonResponse(AnnotationList, 'The annotations made and the new revision'), 404: errorResponses[404], ...createConflict },
    handler: async (c, { params, body }) => {
      const items = Array.isArray(body) ? body : [body];
      const paths = new Set(items.map((a) => a.path));
      if (paths.size > 1) throw new NdsError('validation_failed', { details: ['path: the annotations of one request are of one recording'] });
      const answer = await createAnnotations(c.var.deps, callerOf(c).user, params.id, items[0]!.path, items, ifMatchRevision(c.req.header('if-match')));
      withRevision(c, answer.revision);
      return c.json(answer, 201);
    },
  }),

  route({
    method: 'get',
    path: `${ANNOTATIONS}/history`,
    summary: "Every change of a recording's annotations, oldest first, with its revision, author and time",
    access: 'optional',
    params: IdParam,
    query: HistoryQuery,
    responses: { 200: jsonResponse(AnnotationHistory, 'The changes'), 404: errorResponses[404] },
    handler: async (c, { params, query }) => {
      const { changes, revision } = await annotationHistory(c.var.deps, c.var.caller?.user, params.id, query.path, query.after);
      withRevision(c, revision);
      return c.json({ changes: changes.map((ch) => ({ ...ch, changed_at: new Date(ch.changed_at).toISOString(), before: strip(ch.before), after: strip(ch.after) })), revision }, 200);
    },
  }),

  route({
    method: 'get',
    path: `${ANNOTATIONS}/labels`,
    summary: "The labels of the dataset's annotations on all its recordings, most used first (at most 1,000), with their counts",
    access: 'optional',
    params: IdParam,
    responses: { 200: jsonResponse(AnnotationLabels, 'The labels'), 404: errorResponses[404] },
    handler: async (c, { params }) => {
      c.header('Cache-Control', 'no-store');
      return c.json(await annotationLabels(c.var.deps, c.var.caller?.user, params.id), 200);
    },
  }),

  route({
    method: 'get',
    path: `${ANNOTATIONS}/export`,
    summary: "A recording's annotations as a BIDS events.tsv (onset, duration, trial_type, channel, HED, annotator); the same annotations give the same bytes",
    access: 'optional',
    params: IdParam,
    query: ExportQuery,
    responses: { 200: { description: 'The events table', content: { 'text/tab-separated-values': { schema: { type: 'string' } } } }, 404: errorResponses[404] },
    handler: async (c, { params, query }) => {
      const { annotations, revision } = await readAnnotations(c.var.deps, c.var.caller?.user, params.id, query.path);
      withRevision(c, revision);
      const name = eventsFileName(query.path);
      return c.body(annotationsTsv(annotations), 200, { 'Content-Type': 'text/tab-separated-values; charset=utf-8', 'Content-Disposition': attachmentDisposition(name) });
    },
  }),

  route({
    method: 'post',
    path: `${ANNOTATIONS}/commit`,
    summary: "Write the annotations into the recordings' _events.tsv as a new version, which converts (maintainers, the owner, admins)",
    access: 'any',
    params: IdParam,
    body: { schema: CommitBody },
    responses: { 201: jsonResponse(CommitAnswer, 'The version made'), 404: errorResponses[404], 409: errorResponses[409] },
    handler: async (c, { params, body }) => {
      const user = callerOf(c).user;
      // A dataset whose source is its hosted repository is committed to by the node holding it.
      const holder = await commitMadeElsewhere(c.var.deps, user, params.id);
      if (holder) return forwardToHolder(c, params.id, holder, body);
      return c.json(await commitAnnotations(c.var.deps, user, params.id, body.message), 201);
    },
  }),

  route({
    method: 'patch',
    path: `${ANNOTATIONS}/:annotationId`,
    summary: 'Change an annotation (its author; maintainers, the owner and admins any)',
    access: 'any',
    params: AnnotationParams,
    body: { schema: AnnotationPatchBody },
    responses: { 200: jsonResponse(AnnotationWrite, 'The annotation and the new revision'), 404: errorResponses[404], ...conflict },
    handler: async (c, { params, body }) => {
      const answer = await updateAnnotation(c.var.deps, callerOf(c).user, params.id, params.annotationId, body, ifMatchRevision(c.req.header('if-match')));
      withRevision(c, answer.revision);
      return c.json(answer, 200);
    },
  }),

  route({
    method: 'delete',
    path: `${ANNOTATIONS}/:annotationId`,
    summary: 'Delete an annotation (its author; maintainers, the owner and admins any); the history keeps it',
    access: 'any',
    params: AnnotationParams,
    responses: { 200: jsonResponse(AnnotationWrite.pick({ revision: true }), 'The new revision'), 404: errorResponses[404], ...conflict },
    handler: async (c, { params }) => {
      const answer = await deleteAnnotation(c.var.deps, callerOf(c).user, params.id, params.annotationId, ifMatchRevision(c.req.header('if-match')));
      withRevision(c, answer.revision);
      return c.json(answer, 200);
    },
  }),
];

/** The history shows what an annotation said; its author is the change's own `author`. */
function strip<T extends { author_id?: unknown } | null>(snapshot: T): Omit<NonNullable<T>, 'author_id'> | null {
  if (!snapshot) return null;
  const { author_id: _authorId, ...rest } = snapshot;
  return rest as Omit<NonNullable<T>, 'author_id'>;
}

/** The export's file name: the recording's own `_events.tsv`, or `annotations_events.tsv` for a name that is not BIDS. */
function eventsFileName(path: string): string {
  try {
    return eventsPathOf(path).split('/').pop()!;
  } catch {
    return 'annotations_events.tsv';
  }
}
