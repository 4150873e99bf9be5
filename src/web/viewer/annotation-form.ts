/**
 * The annotation form over the plot (`annotation-editor.ts` decides what it edits): label with the offered
 * labels, the rows it applies to, onset and duration, note, a message line for refusals and conflicts, and
 * Save, Delete, Close.
 */
import type { AnnotationDraft } from './annotation-marks.js';

/** Seconds as the form shows them (to the microsecond). */
export function shownSeconds(seconds: number): number {
  return Number(seconds.toFixed(6));
}

export interface AnnotationFormValues {
  label: string;
  rows: 'all' | 'dragged' | 'shown';
  onset: number;
  duration: number;
  note: string;
}

/** The annotation form; its fields are named `annotation-*` for people and tests alike. */
export function buildAnnotationForm() {
  const element = document.createElement('form');
  element.className = 'viewer-annotation-form';
  element.hidden = true;
  element.setAttribute('aria-label', 'Annotation');
  const field = (text: string, input: HTMLElement) => {
    const label = document.createElement('label');
    label.append(text, ' ', input);
    return label;
  };
  const input = (name: string, attrs: Record<string, string> = {}) => {
    const el = document.createElement('input');
    el.name = name;
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    return el;
  };
  const title = document.createElement('strong');
  const label = input('annotation-label', { list: 'nds-annotation-labels', maxlength: '200', required: '', autocomplete: 'off' });
  const labels = document.createElement('datalist');
  labels.id = 'nds-annotation-labels';
  const rows = document.createElement('select');
  rows.name = 'annotation-rows';
  const onset = input('annotation-onset', { type: 'number', step: 'any', min: '0', required: '' });
  const duration = input('annotation-duration', { type: 'number', step: 'any', min: '0', required: '' });
  const note = input('annotation-note', { maxlength: '2000', autocomplete: 'off' });
  const message = document.createElement('p');
  message.className = 'viewer-annotation-message';
  message.setAttribute('role', 'alert');
  const button = (text: string, action: string, type: 'submit' | 'button' = 'button') => {
    const b = document.createElement('button');
    b.type = type;
    b.textContent = text;
    b.dataset['action'] = action;
    return b;
  };
  const saveButton = button('Save', 'save', 'submit');
  const deleteButton = button('Delete', 'delete');
  const cancelButton = button('Close', 'cancel');
  const buttons = document.createElement('div');
  buttons.append(saveButton, deleteButton, cancelButton);
  element.append(title, field('Label', label), labels, field('Rows', rows), field('Onset (s)', onset), field('Duration (s)', duration), field('Note', note), message, buttons);
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') cancelButton.click();
  });
  let submit: ((v: AnnotationFormValues) => Promise<void>) | undefined;
  let offered = '';
  /** The labels offered as the label is typed (the datalist rebuilt only when they changed). */
  const offer = (choices: readonly string[]) => {
    const key = choices.join('\n');
    if (key === offered) return;
    offered = key;
    labels.replaceChildren(...choices.map((l) => new Option(l, l)));
  };
  /** Whether Save may be pressed (not on someone else's annotation, nor on one that is gone). */
  let editable = true;
  const setEditable = (on: boolean) => {
    editable = on;
    for (const el of [label, rows, onset, duration, note, saveButton, deleteButton]) el.toggleAttribute('disabled', !on);
  };
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    const values: AnnotationFormValues = { label: label.value.trim(), rows: rows.value as AnnotationFormValues['rows'], onset: Number(onset.value), duration: Number(duration.value), note: note.value.trim() };
    if (!values.label) return;
    saveButton.disabled = true;
    message.textContent = '';
    void submit?.(values).finally(() => (saveButton.disabled = !editable));
  });
  return {
    element,
    label,
    get visible() {
      return !element.hidden;
    },
    /** Fills and shows the form; `undefined` only shows it again as it is. */
    show(content: { title: string; draft: AnnotationDraft; dragged: string[]; note?: string | null; labels: string[]; editable: boolean; isNew: boolean } | undefined) {
      element.hidden = false;
      if (!content) return;
      const { draft } = content;
      title.textContent = content.title;
      offer(content.labels);
      label.value = draft.label;
      const many = (names: string[]) => (names.length > 4 ? `${names.slice(0, 3).join(', ')} … (${names.length})` : names.join(', '));
      const choices: Array<[string, string]> = [['all', 'all channels']];
      if (content.dragged.length) choices.push(['dragged', content.isNew ? `dragged: ${many(content.dragged)}` : `its channels: ${many(content.dragged)}`]);
      choices.push(['shown', 'the channels shown']);
      rows.replaceChildren(...choices.map(([v, t]) => new Option(t, v)));
      rows.value = content.isNew || draft.channels === null ? 'all' : 'dragged';
      onset.value = String(shownSeconds(draft.onset));
      duration.value = String(shownSeconds(draft.duration));
      note.value = content.note ?? '';
      message.textContent = '';
      message.classList.remove('conflict');
      setEditable(content.editable);
      deleteButton.hidden = content.isNew || !content.editable;
      saveButton.hidden = !content.editable;
      element.dataset['annotation'] = draft.id ?? '';
      if (content.editable) label.focus();
    },
    offer,
    /** Puts the form over the plot's left part (`left`, from CSS pixel `plotLeft`) or its right, away from the span. */
    place(left: boolean, plotLeft: number) {
      element.style.left = left ? `${plotLeft + 8}px` : '';
      element.style.right = left ? 'auto' : '';
    },
    /** Nothing left to save: the fields and Save, Delete are disabled, Close stays. */
    freeze() {
      setEditable(false);
    },
    hide() {
      element.hidden = true;
      element.dataset['annotation'] = '';
    },
    message(text: string, isProblem = false) {
      message.textContent = text;
      message.classList.toggle('conflict', isProblem);
    },
    onSubmit(fn: (v: AnnotationFormValues) => Promise<void>) {
      submit = fn;
    },
    onDelete(fn: () => void) {
      deleteButton.addEventListener('click', fn);
    },
    onCancel(fn: () => void) {
      cancelButton.addEventListener('click', fn);
    },
  };
}
