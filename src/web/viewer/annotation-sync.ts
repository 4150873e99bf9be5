/**
 * The viewer's copy of one recording's annotations, kept in step with the server (docs/viewer.md,
 * "Annotations"). It reads them once, then asks every `pollMs` for the changes after its revision
 * (`GET …/annotations/history?after=`): an empty list when nothing changed, so a quiet recording costs one
 * small request a poll whatever its size. Edits are sent with `If-Match: "<revision>"`; when the server
 * answers 409, the copy catches up and looks at the annotation the user edited: changed by someone else
 * (or deleted) is a conflict the caller shows, with the other version, and nothing is sent; untouched, the
 * edit is sent again on the new revision (someone else's change elsewhere in the recording is no conflict).
 */
import { AnnotationIndex, type ViewerAnnotation } from './annotation-index.js';

export interface AnnotationSyncOptions {
  /** `/datasets/<id>/annotations`. */
  url: string;
  /** The recording's data file (as `/signal` names it). */
  path: string;
  /** How often to ask for others' changes (default 2 s: they appear within 5 s). */
  pollMs?: number | undefined;
  /** Called with the index after every change, ours or others' (the same index, changed in place). */
  onChange(index: AnnotationIndex): void;
  /** A poll failed (the network, a signed-out session); polling goes on. */
  onError?(message: string): void;
  fetch?: typeof fetch | undefined;
}

/** What the user may set on an annotation. */
export interface AnnotationFields {
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
  note?: string | null | undefined;
}

/** An edit the server did not take because someone changed or deleted the annotation meanwhile. */
export interface AnnotationConflict {
  conflict: true;
  /** The annotation as it now is; undefined when it was deleted. */
  current: ViewerAnnotation | undefined;
  /** Who changed it last, when the history says. */
  by: string | null | undefined;
}

export type EditAnswer = { conflict: false; annotation: ViewerAnnotation | undefined } | AnnotationConflict;

/** A refusal other than a conflict (403, 400 with the server's details), with the server's message. */
export class AnnotationRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Change {
  revision: number;
  annotation_id: string;
  action: 'create' | 'update' | 'delete';
  after: Omit<ViewerAnnotation, 'id' | 'author' | 'created_at' | 'updated_at'> | null;
  author: string | null;
  changed_at: string;
}

/** The dataset's labels are read again when the form opens this long after the last read. */
const LABELS_FRESH_MS = 30_000;

/** The history route answers at most this many changes; a longer gap is read whole instead. */
const HISTORY_PAGE = 10_000;

const sameContent = (a: AnnotationFields & { hed?: string | null }, b: AnnotationFields & { hed?: string | null }) =>
  a.onset === b.onset && a.duration === b.duration && a.label === b.label && (a.note ?? null) === (b.note ?? null) && (a.hed ?? null) === (b.hed ?? null) && JSON.stringify(a.channels) === JSON.stringify(b.channels);

export class AnnotationSync {
  readonly #o: AnnotationSyncOptions;
  readonly #fetch: typeof fetch;
  /** Who made the last change we saw to each annotation (for the conflict message). */
  readonly #changedBy = new Map<string, string | null>();
  #revision = 0;
  /** The annotations: built once when read, then each change applied in place (no sort per edit at 100,000). */
  readonly #index = new AnnotationIndex();
  #loaded = false;
  #catchingUp: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #labels: string[] | undefined;
  readonly #datasetLabels: { list: string[]; at: number; reading?: Promise<readonly string[]> } = { list: [], at: 0 };

  constructor(options: AnnotationSyncOptions) {
    this.#o = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get revision(): number {
    return this.#revision;
  }

  get index(): AnnotationIndex {
    return this.#index;
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  get(id: string): ViewerAnnotation | undefined {
    return this.#index.get(id);
  }

  /** The labels used on this recording, most used first. */
  labels(): string[] {
    if (!this.#labels) {
      const counts = new Map<string, number>();
      for (const a of this.#index.all) counts.set(a.label, (counts.get(a.label) ?? 0) + 1);
      this.#labels = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([label]) => label);
    }
    return this.#labels;
  }

  /**
   * The labels of the dataset's annotations on all its recordings, most used first
   * (`GET /datasets/<id>/annotations/labels`), as last read (`datasetLabels()` reads them).
   */
  get knownDatasetLabels(): readonly string[] {
    return this.#datasetLabels.list;
  }

  /**
   * Reads the dataset's labels when the last read is older than `LABELS_FRESH_MS` (others label other
   * recordings meanwhile); a failed read keeps the last list (the recording's own labels are offered anyway).
   */
  datasetLabels(): Promise<readonly string[]> {
    const known = this.#datasetLabels;
    if (known.reading && Date.now() - known.at < LABELS_FRESH_MS) return known.reading;
    known.at = Date.now();
    known.reading = this.#request(`${this.#o.url}/labels`)
      .then(async (response) => {
        if (response.ok) known.list = ((await response.json()) as { labels: Array<{ label: string }> }).labels.map((l) => l.label);
        return known.list;
      })
      .catch(() => known.list);
    return known.reading;
  }

  /** Reads every annotation of the recording and starts asking for changes. */
  async start(): Promise<void> {
    await this.#reload();
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // A tab in the background asks nothing; shown again, it catches up at the next tick.
      if (typeof document !== 'undefined' && document.visibilityState === 'hidden') return this.#schedule();
      this.catchUp()
        .catch((err: unknown) => this.#o.onError?.(String(err instanceof Error ? err.message : err)))
        .finally(() => this.#schedule());
    }, this.#o.pollMs ?? 2000);
  }

  #query(extra = ''): string {
    return `${this.#o.url}${extra}?path=${encodeURIComponent(this.#o.path)}`;
  }

  async #request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('accept', 'application/json');
    if (init.body) headers.set('content-type', 'application/json');
    return this.#fetch(url, { ...init, headers, credentials: 'same-origin', cache: 'no-store' });
  }

  async #reload(): Promise<void> {
    const response = await this.#request(this.#query());
    if (!response.ok) throw await refusal(response);
    const answer = (await response.json()) as { annotations: ViewerAnnotation[]; revision: number };
    this.#index.replace(answer.annotations);
    this.#revision = answer.revision;
    this.#loaded = true;
    this.#changed();
  }

  #changed(put: ViewerAnnotation[] = [], removed: string[] = []): void {
    if (put.length || removed.length) this.#index.update(put, removed);
    this.#labels = undefined;
    this.#o.onChange(this.#index);
  }

  /** Applies the changes after our revision (one request at a time; callers share it). */
  catchUp(): Promise<void> {
    this.#catchingUp ??= this.#catchUp().finally(() => (this.#catchingUp = undefined));
    return this.#catchingUp;
  }

  async #catchUp(): Promise<void> {
    const from = this.#revision;
    const response = await this.#request(`${this.#query('/history')}&after=${from}`);
    if (!response.ok) throw await refusal(response);
    const answer = (await response.json()) as { changes: Change[]; revision: number };
    if (answer.changes.length >= HISTORY_PAGE) return this.#reload();
    // The changes in order, the last of each annotation winning: what the index then takes in one update.
    const latest = new Map<string, ViewerAnnotation | null>();
    const seen = (id: string) => (latest.has(id) ? latest.get(id) ?? undefined : this.#index.get(id));
    let revision = Math.max(from, answer.revision);
    for (const c of answer.changes) {
      revision = Math.max(revision, c.revision);
      this.#changedBy.set(c.annotation_id, c.author);
      const known = seen(c.annotation_id);
      if (c.action === 'delete' || !c.after) {
        if (known) latest.set(c.annotation_id, null);
        continue;
      }
      // Our own change comes back here too when another landed between it and our revision: same content, no news.
      if (known && sameContent(known, c.after)) continue;
      latest.set(c.annotation_id, {
        ...c.after,
        id: c.annotation_id,
        author: known ? known.author : c.author,
        created_at: known?.created_at ?? c.changed_at,
        updated_at: c.changed_at,
      });
    }
    this.#revision = revision;
    const put = [...latest.values()].filter((a): a is ViewerAnnotation => a !== null);
    const removed = [...latest].filter(([id, a]) => a === null && this.#index.get(id)).map(([id]) => id);
    if (put.length || removed.length) this.#changed(put, removed);
  }

  /** Takes the revision a write answered: ours when it follows the one we had, else others' changes came first. */
  #wrote(revision: number): void {
    if (revision === this.#revision + 1) this.#revision = revision;
    else void this.catchUp().catch(() => undefined);
  }

  /** Creates an annotation (no `If-Match`: a new span conflicts with nobody's edit). */
  async create(fields: AnnotationFields): Promise<ViewerAnnotation> {
    const response = await this.#request(this.#o.url, { method: 'POST', body: JSON.stringify({ path: this.#o.path, ...fields }) });
    if (!response.ok) throw await refusal(response);
    const answer = (await response.json()) as { annotations: ViewerAnnotation[]; revision: number };
    const made = answer.annotations[0]!;
    this.#changedBy.set(made.id, made.author);
    this.#wrote(answer.revision);
    this.#changed([made]);
    return made;
  }

  /**
   * Changes annotation `base.id` from what the user saw (`base`) to `patch`. A conflict when it is no longer
   * `base` (someone else changed or deleted it): nothing is sent, the caller shows the current version.
   */
  update(base: ViewerAnnotation, patch: Partial<AnnotationFields>): Promise<EditAnswer> {
    return this.#edit(base, async () => {
      const response = await this.#request(`${this.#o.url}/${base.id}`, { method: 'PATCH', headers: { 'if-match': `"${this.#revision}"` }, body: JSON.stringify(patch) });
      if (response.status === 409) return 'conflict';
      if (!response.ok) throw await refusal(response);
      const answer = (await response.json()) as { annotation: ViewerAnnotation; revision: number };
      this.#wrote(answer.revision);
      this.#changed([answer.annotation]);
      return answer.annotation;
    });
  }

  /** Deletes annotation `base.id` if it is still what the user saw. */
  remove(base: ViewerAnnotation): Promise<EditAnswer> {
    return this.#edit(base, async () => {
      const response = await this.#request(`${this.#o.url}/${base.id}`, { method: 'DELETE', headers: { 'if-match': `"${this.#revision}"` } });
      if (response.status === 409) return 'conflict';
      if (!response.ok) throw await refusal(response);
      const answer = (await response.json()) as { revision: number };
      this.#wrote(answer.revision);
      this.#changed([], [base.id]);
      return undefined;
    });
  }

  async #edit(base: ViewerAnnotation, send: () => Promise<ViewerAnnotation | undefined | 'conflict'>): Promise<EditAnswer> {
    // Three rounds: each 409 means another change landed first; more than that in a row is a busy recording, shown as a conflict.
    for (let round = 0; round < 3; round++) {
      const current = this.#index.get(base.id);
      if (!current || !sameContent(current, base)) return { conflict: true, current, by: this.#changedBy.get(base.id) };
      const sent = await send();
      if (sent !== 'conflict') return { conflict: false, annotation: sent };
      await this.catchUp();
    }
    return { conflict: true, current: this.#index.get(base.id), by: this.#changedBy.get(base.id) };
  }
}

async function refusal(response: Response): Promise<AnnotationRequestError> {
  let message = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { message?: string; details?: string[] } | string; message?: string; details?: string[] };
    const error = typeof body.error === 'object' ? body.error : body;
    message = [error?.message ?? (typeof body.error === 'string' ? body.error : undefined), ...(error?.details ?? [])].filter(Boolean).join(': ') || message;
  } catch {
    // Not JSON: the status says enough.
  }
  return new AnnotationRequestError(response.status, message);
}
