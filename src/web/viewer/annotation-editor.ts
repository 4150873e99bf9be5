/**
 * The viewer's annotation mode (docs/viewer.md, "Annotations"): offered by the page only to those who may
 * annotate. In the mode, dragging across the traces draws a new span (over the rows dragged across) and opens
 * a form for its label (the dataset's labels offered, a new one typed), the rows it applies to and a note;
 * clicking a span opens it; dragging an edge of one's own span moves that edge and saves. Everyone who reads
 * the recording may open an annotation's details from the list; only its author and maintainers change it.
 */
import type { ViewerAnnotation } from './annotation-index.js';
import type { AnnotationDraft } from './annotation-marks.js';
import { hitAnnotation, rowAt, secondsAt } from './annotation-pointer.js';
import { AnnotationRequestError, type AnnotationConflict, type AnnotationFields, type AnnotationSync } from './annotation-sync.js';
import type { SignalViewer } from './signal-viewer.js';
import { buildAnnotationForm, shownSeconds } from './annotation-form.js';

export interface AnnotationAccess {
  /** The caller may annotate (annotators, maintainers, the owner, admins). */
  annotate: boolean;
  /** The caller changes anyone's annotations (maintainers, the owner, admins). */
  maintain: boolean;
  /** The signed-in caller's username (an annotator changes their own). */
  username?: string | undefined;
  /** The dataset's event types (its events' trial types), offered after the labels of its annotations. */
  labels: string[];
}

export interface AnnotationEditor {
  /** Opens the form on an annotation (read-only when the caller may not change it). */
  open(annotation: ViewerAnnotation): void;
  /** Deletes an annotation the caller may change, reporting a conflict in the form's message. */
  remove(annotation: ViewerAnnotation): Promise<void>;
  mayChange(annotation: ViewerAnnotation): boolean;
  /** Whether the mode owns the pointer (the traces are not scrubbed by a drag). */
  readonly active: boolean;
  /** Closes the form and drops a draft (Escape). */
  cancel(): void;
  detach(): void;
}

type Pointer = { kind: 'new'; x0: number; row0: number; row1: number; onset: number; end: number } | { kind: 'edge'; base: ViewerAnnotation; edge: 'start' | 'end'; onset: number; end: number };

export function attachAnnotationEditor(root: HTMLElement, canvas: HTMLCanvasElement, viewer: SignalViewer, sync: AnnotationSync, access: AnnotationAccess): AnnotationEditor {
  const toggle = root.querySelector<HTMLButtonElement>('button[data-annotate]');
  const plot = canvas.parentElement!;
  const form = buildAnnotationForm();
  plot.append(form.element);
  const ratio = () => window.devicePixelRatio || 1;
  const at = (event: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    return { x: (event.clientX - rect.left) * ratio(), y: (event.clientY - rect.top) * ratio() };
  };
  let active = false;
  let pointer: Pointer | undefined;
  /**
   * What the form edits: a new span (`draft`, no `base`) or a saved annotation as it was when opened (`base`;
   * a `draft` only while a moved edge is being saved). `dragged`: the channels the rows choice "dragged" means.
   */
  let editing: { base?: ViewerAnnotation; draft?: AnnotationDraft; dragged: string[] } | undefined;
  /** The label of the last new annotation saved, offered for the next (a run of spans of one kind). */
  let lastLabel = '';

  const mayChange = (a: ViewerAnnotation) => access.annotate && (access.maintain || (a.author !== null && a.author === access.username));
  const setActive = (on: boolean) => {
    active = on && access.annotate;
    toggle?.setAttribute('aria-pressed', String(active));
    root.dataset['annotating'] = String(active);
    // The dataset's labels are read when the mode is turned on, so the first form offers them.
    if (active) void sync.datasetLabels();
    if (!active) cancel();
  };
  const focus = () => viewer.setAnnotationFocus({ draft: pointer ? pointerDraft(pointer) : editing?.draft, selected: editing?.base?.id });
  const pointerDraft = (p: Pointer): AnnotationDraft => {
    const onset = Math.min(p.onset, p.end);
    const duration = Math.abs(p.end - p.onset);
    if (p.kind === 'edge') return { id: p.base.id, onset, duration, channels: p.base.channels, label: p.base.label };
    return { onset, duration, channels: draggedChannels(p), label: lastLabel || 'new' };
  };
  const draggedChannels = (p: Extract<Pointer, { kind: 'new' }>) => {
    const rows = viewer.last?.rowChannels ?? [];
    return [...new Set(rows.slice(Math.min(p.row0, p.row1), Math.max(p.row0, p.row1) + 1))];
  };

  const onDown = (event: MouseEvent) => {
    const s = viewer.last;
    if (!active || !s || event.button !== 0 || event.shiftKey) return;
    const { x, y } = at(event);
    if (x < s.plot.left || x >= s.plot.left + s.plot.width || y < s.plot.top || y >= s.plot.top + s.plot.height) return;
    event.preventDefault();
    // Not scrolled into view: the page moving under a drag would move the span's other end.
    root.focus({ preventScroll: true });
    const hit = hitAnnotation(s.annotationsDrawn, s, x, y);
    const saved = hit && sync.get(hit.annotation.id);
    if (hit && saved) {
      if (hit.part !== 'inside' && mayChange(saved)) {
        pointer = { kind: 'edge', base: saved, edge: hit.part, onset: saved.onset, end: saved.onset + saved.duration };
        return;
      }
      open(saved);
      return;
    }
    const t = secondsAt(s, x);
    const row = rowAt(s, y);
    pointer = { kind: 'new', x0: x, row0: row, row1: row, onset: t, end: t };
    editing = undefined;
    form.hide();
  };
  const onMove = (event: MouseEvent) => {
    const s = viewer.last;
    if (!pointer || !s) return;
    const { x, y } = at(event);
    if (pointer.kind === 'new') {
      pointer.end = secondsAt(s, x);
      pointer.row1 = rowAt(s, y);
    } else if (pointer.edge === 'start') pointer.onset = secondsAt(s, x);
    else pointer.end = secondsAt(s, x);
    focus();
  };
  const onUp = (event: MouseEvent) => {
    const p = pointer;
    if (!p) return;
    pointer = undefined;
    const draft = pointerDraft(p);
    if (p.kind === 'new') {
      // A click, not a drag: nothing to annotate.
      if (Math.abs(at(event).x - p.x0) < 3 || draft.duration === 0) return focus();
      editing = { draft, dragged: draft.channels ?? [] };
      form.show({ title: 'New annotation', draft: { ...draft, label: lastLabel }, dragged: editing.dragged, labels: labelChoices(), editable: true, isNew: true });
      refreshLabels();
      placeForm(draft.onset, draft.duration);
      focus();
      return;
    }
    if (draft.onset === p.base.onset && draft.duration === p.base.duration) return focus();
    void save(p.base, { onset: draft.onset, duration: draft.duration }, draft);
  };

  /** The form goes to the side of the plot the annotation is not on. */
  const placeForm = (onset: number, duration: number) => {
    const s = viewer.last;
    if (!s) return;
    const middle = ((onset + duration / 2) * s.rate - s.start) / (s.end - s.start);
    form.place(middle > 0.5, s.plot.left / ratio());
  };
  // This recording's labels, then the dataset's (its other recordings too), then its event types; most used first.
  const labelChoices = () => [...new Set([...sync.labels(), ...sync.knownDatasetLabels, ...access.labels, ...viewer.events.map((e) => e.label)])].slice(0, 300);
  /** The dataset's labels read again if stale, offered in the form still open when they come. */
  const refreshLabels = () => void sync.datasetLabels().then(() => form.visible && form.offer(labelChoices()));

  const open = (a: ViewerAnnotation) => {
    editing = { base: a, dragged: a.channels ?? [] };
    const editable = mayChange(a);
    form.show({
      title: editable ? 'Annotation' : `Annotation by ${a.author ?? 'a removed account'}`,
      draft: { id: a.id, onset: a.onset, duration: a.duration, channels: a.channels, label: a.label },
      dragged: editing.dragged,
      note: a.note,
      labels: labelChoices(),
      editable,
      isNew: false,
    });
    placeForm(a.onset, a.duration);
    if (editable) refreshLabels();
    if (!editable) form.message(access.annotate ? 'Only its author, maintainers and the owner change it.' : '');
    focus();
  };

  const conflictMessage = (c: AnnotationConflict, attempted: string) =>
    c.current
      ? `${c.by ?? 'Someone'} changed this annotation meanwhile; it is shown as it now is. Your change (${attempted}) was not saved: make it again if it still applies.`
      : `${c.by ?? 'Someone'} deleted this annotation meanwhile; your change (${attempted}) was not saved.`;

  const save = async (base: ViewerAnnotation, patch: Partial<AnnotationFields>, draft?: AnnotationDraft) => {
    if (draft) editing = { base, draft, dragged: editing?.dragged ?? base.channels ?? [] };
    focus();
    try {
      const answer = await sync.update(base, patch);
      if (answer.conflict) {
        const attempted = Object.entries(patch).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ');
        if (answer.current) open(answer.current);
        else gone();
        form.message(conflictMessage(answer, attempted), true);
        return;
      }
      if (form.visible && editing?.base?.id === base.id && answer.annotation) open(answer.annotation);
      else close();
    } catch (err) {
      form.message(errorText(err), true);
      form.show(undefined);
    }
  };

  const remove = async (a: ViewerAnnotation) => {
    try {
      const answer = await sync.remove(a);
      if (answer.conflict) {
        if (answer.current) open(answer.current);
        else gone();
        form.message(conflictMessage(answer, 'delete'), true);
        return;
      }
      if (editing?.base?.id === a.id) close();
    } catch (err) {
      form.show(undefined);
      form.message(errorText(err), true);
    }
  };

  form.onSubmit(async (values) => {
    if (!editing) return;
    const channels = values.rows === 'all' ? null : values.rows === 'shown' ? viewer.settings.shown.map((i) => viewer.sources[i]!.label) : editing.dragged;
    // Times are shown to the microsecond: a field left as shown keeps the exact time (on a sample), not its rounding.
    const exact = editing.base ?? editing.draft;
    const time = (key: 'onset' | 'duration') => (exact && values[key] === shownSeconds(exact[key]) ? exact[key] : values[key]);
    const fields: AnnotationFields = { onset: time('onset'), duration: time('duration'), channels: channels?.length ? channels : null, label: values.label, note: values.note || null };
    const base = editing.base;
    if (!base) {
      try {
        await sync.create(fields);
        lastLabel = fields.label;
        close();
      } catch (err) {
        form.message(errorText(err), true);
      }
      return;
    }
    const patch: Partial<AnnotationFields> = {};
    for (const key of ['onset', 'duration'] as const) if (fields[key] !== base[key]) patch[key] = fields[key];
    for (const key of ['label', 'note'] as const) if ((fields[key] ?? null) !== (base[key] ?? null)) Object.assign(patch, { [key]: fields[key] });
    if (JSON.stringify(fields.channels) !== JSON.stringify(base.channels)) patch.channels = fields.channels;
    if (Object.keys(patch).length === 0) return close();
    await save(base, patch);
  });
  form.onDelete(() => editing?.base && void remove(editing.base));
  form.onCancel(() => close());

  /** The annotation the form was on no longer exists: the form stays, read-only, to say so. */
  const gone = () => {
    editing = undefined;
    form.show(undefined);
    form.freeze();
    focus();
  };
  const close = () => {
    editing = undefined;
    form.hide();
    focus();
  };
  function cancel(): void {
    pointer = undefined;
    close();
  }

  // A new span is drawn with the label being typed.
  const onLabelInput = () => {
    if (!editing?.draft || editing.base) return;
    editing.draft = { ...editing.draft, label: form.label.value.trim() || 'new' };
    focus();
  };
  form.label.addEventListener('input', onLabelInput);
  const onToggle = () => setActive(!active);
  toggle?.addEventListener('click', onToggle);
  canvas.addEventListener('mousedown', onDown);
  window.addEventListener('mousemove', onMove);
  window.addEventListener('mouseup', onUp);
  setActive(false);
  return {
    open,
    remove,
    mayChange,
    cancel,
    get active() {
      return active;
    },
    detach() {
      toggle?.removeEventListener('click', onToggle);
      canvas.removeEventListener('mousedown', onDown);
      window.removeEventListener('mousemove', onMove);
      window.removeEventListener('mouseup', onUp);
      toggle?.setAttribute('aria-pressed', 'false');
      form.element.remove();
    },
  };
}

function errorText(err: unknown): string {
  if (err instanceof AnnotationRequestError) return err.status === 403 ? `Not allowed: ${err.message}` : err.message;
  return `Could not save: ${String(err instanceof Error ? err.message : err)}`;
}
