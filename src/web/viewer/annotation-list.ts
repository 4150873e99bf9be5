/**
 * The annotations part of the events panel: the annotations in the window (at most `listed` of them: a row
 * per annotation of a 100,000-annotation recording would be 100,000 DOM nodes), each with its time, label,
 * author and duration; a click opens it, and the caller's own (or any, for maintainers) have Edit and Delete.
 */
import type { AnnotationIndex, ViewerAnnotation } from './annotation-index.js';
import { annotationColour } from './annotation-marks.js';
import type { AnnotationEditor } from './annotation-editor.js';
import type { SignalViewer, ViewerState } from './signal-viewer.js';

/** Rows listed at most: the window's first ones by onset. */
export const listed = 100;

export interface AnnotationList {
  element: HTMLElement;
  sync(state: ViewerState): void;
}

/** `canAnnotate`: with no annotation yet, say how to make one (otherwise the panel shows only events). */
export function annotationList(viewer: SignalViewer, index: () => AnnotationIndex | undefined, editor: AnnotationEditor, canAnnotate: boolean): AnnotationList {
  const element = document.createElement('section');
  element.className = 'viewer-annotations';
  let shownKey = '';

  const render = (shown: ViewerAnnotation[], inView: number, total: number) => {
    if (total === 0) {
      const hint = document.createElement('p');
      hint.className = 'muted';
      hint.textContent = 'No annotations yet: press Annotate, then drag across the traces.';
      element.replaceChildren(...(canAnnotate ? [hint] : []));
      return;
    }
    const heading = document.createElement('h3');
    heading.textContent = `Annotations (${total})`;
    const summary = document.createElement('p');
    summary.className = 'muted';
    summary.textContent = inView > shown.length ? `${shown.length} of the ${inView} in view listed: zoom in for the rest.` : `${inView} in view.`;
    const table = document.createElement('table');
    table.className = 'viewer-events viewer-annotation-rows';
    const head = table.createTHead().insertRow();
    for (const text of ['time', 'label · by', '']) head.insertCell().textContent = text;
    const body = table.createTBody();
    for (const a of shown) {
      const row = body.insertRow();
      row.dataset['annotation'] = a.id;
      row.title = `${a.label}${a.channels ? ` · ${a.channels.join(', ')}` : ' · all channels'} · ${a.duration.toFixed(3)} s${a.note ? ` · ${a.note}` : ''}`;
      row.insertCell().textContent = viewer.formatTime(a.onset, 0.001);
      // The label in its colour over its author and duration: the label gets the row's width.
      const label = row.insertCell();
      const text = document.createElement('span');
      text.className = 'clip';
      text.textContent = a.label;
      text.style.color = annotationColour(a.label);
      const by = document.createElement('small');
      by.className = 'clip muted';
      by.textContent = `${a.author ?? 'a removed account'} · ${a.duration.toFixed(2)} s`;
      label.append(text, by);
      const actions = row.insertCell();
      actions.className = 'viewer-annotation-actions';
      if (editor.mayChange(a)) {
        const button = (glyph: string, action: string, title: string, act: () => void) => {
          const b = document.createElement('button');
          b.type = 'button';
          b.textContent = glyph;
          b.title = title;
          b.dataset['action'] = action;
          b.addEventListener('click', (event) => {
            event.stopPropagation();
            act();
          });
          return b;
        };
        actions.append(button('✎', 'edit', 'Edit', () => editor.open(a)), button('×', 'delete', 'Delete', () => void editor.remove(a)));
      }
      row.addEventListener('click', () => editor.open(a));
    }
    element.replaceChildren(heading, summary, table);
  };

  return {
    element,
    sync(state) {
      const found = index();
      if (!found) return;
      const from = state.start / state.rate;
      const to = state.end / state.rate;
      const shown = found.overlapping(from, to, listed);
      const key = `${found.size}|${state.annotationsInView}|${shown.map((a) => `${a.id}:${a.updated_at}`).join(',')}`;
      if (key === shownKey) return;
      shownKey = key;
      render(shown, state.annotationsInView, found.size);
    },
  };
}
