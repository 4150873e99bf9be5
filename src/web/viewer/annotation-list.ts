/**
 * The annotations part of the events panel: the annotations in the window, each with its time, label, author
 * and duration; a click opens it, and the caller's own (or any, for maintainers) have Edit and Delete.
 *
 * A frame's cost must not follow the number listed (a 10-minute window of a 100,000-annotation recording holds
 * ~17,000): the rows are of one fixed height in a box of their own that scrolls, and only those scrolled into
 * view (and a few either side) are in the document, between two spacers that stand for the others. A row is
 * made once per annotation and version and kept while it stays in view, so a pan adds the rows that came in and
 * removes those that left, and a frame that changes nothing listed (a redraw, a poll with no news) touches
 * nothing. Nothing is done while the panel is closed or shows the channels.
 */
import type { AnnotationIndex, ViewerAnnotation } from './annotation-index.js';
import { annotationColour } from './annotation-marks.js';
import type { AnnotationEditor } from './annotation-editor.js';
import type { SignalViewer, ViewerState } from './signal-viewer.js';

/**
 * A listed annotation's row height in CSS pixels, and the rows the box shows at once: the viewer's stylesheet
 * (`viewer-css.ts`, `.viewer-annotation-rows`) gives every row this height, so a row's place is its index × it.
 */
export const rowHeight = 34;
export const rowsShown = 10;
/** Rows kept in the document past those in the box, above and below (a short scroll shows no gap). */
const overscan = 5;

export interface AnnotationList {
  element: HTMLElement;
  sync(state: ViewerState): void;
}

interface ListedRow {
  row: HTMLTableRowElement;
  /** What the row shows: a change makes a new annotation object (the index never changes one), so identity says. */
  annotation: ViewerAnnotation;
  format: string;
}

/** `canAnnotate`: with no annotation yet, say how to make one (otherwise the panel shows only events). */
export function annotationList(viewer: SignalViewer, index: () => AnnotationIndex | undefined, editor: AnnotationEditor, canAnnotate: boolean): AnnotationList {
  const element = document.createElement('section');
  element.className = 'viewer-annotations';
  const heading = document.createElement('h3');
  const summary = document.createElement('p');
  summary.className = 'muted';
  const scroller = document.createElement('div');
  scroller.className = 'viewer-annotation-scroll';
  const table = document.createElement('table');
  table.className = 'viewer-events viewer-annotation-rows';
  const head = table.createTHead().insertRow();
  for (const text of ['time', 'label · by', '']) head.insertCell().textContent = text;
  const body = table.createTBody();
  const spacer = () => {
    const row = document.createElement('tr');
    row.className = 'spacer';
    const cell = row.insertCell();
    cell.colSpan = 3;
    return { row, cell };
  };
  const above = spacer();
  const below = spacer();
  body.append(above.row, below.row);
  scroller.append(table);
  const hint = document.createElement('p');
  hint.className = 'muted';
  hint.textContent = 'No annotations yet: press Annotate, then drag across the traces.';

  /** The rows in the document, by annotation id. */
  let listed = new Map<string, ListedRow>();
  /** What the list shows now: the index's version, the window, the rows scrolled to and the time format. */
  let shownKey = '';
  let view: { from: number; to: number } | undefined;
  /** The box's scroll position, kept from its scroll events (reading it in a frame would force a layout). */
  let scrolled = 0;
  let drawScheduled = false;
  scroller.addEventListener('scroll', () => {
    scrolled = scroller.scrollTop;
    if (drawScheduled) return;
    drawScheduled = true;
    requestAnimationFrame(() => {
      drawScheduled = false;
      draw();
    });
  });

  const makeRow = (a: ViewerAnnotation): HTMLTableRowElement => {
    const row = document.createElement('tr');
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
    return row;
  };

  const setText = (node: HTMLElement, text: string) => {
    if (node.textContent !== text) node.textContent = text;
  };

  /** Shows the rows of the window's annotations that are scrolled into the box; nothing when none of it changed. */
  const draw = () => {
    const found = index();
    if (!found || !view) return;
    const total = found.size;
    if (total === 0) {
      const empty = canAnnotate ? [hint] : [];
      if (element.childNodes.length !== empty.length || element.firstChild !== (empty[0] ?? null)) element.replaceChildren(...empty);
      for (const { row } of listed.values()) row.remove();
      listed = new Map();
      shownKey = '';
      return;
    }
    if (element.firstChild !== heading) element.replaceChildren(heading, summary, scroller);
    const { from, to } = view;
    const inView = found.count(from, to);
    const first = Math.min(Math.max(0, Math.floor(scrolled / rowHeight) - overscan), Math.max(0, inView - 1));
    const last = Math.min(inView, first + rowsShown + 2 * overscan + 1);
    const format = viewer.settings.timeFormat;
    const key = `${found.version}|${from}|${to}|${inView}|${first}|${format}`;
    if (key === shownKey) return;
    shownKey = key;
    setText(heading, `Annotations (${total})`);
    setText(summary, `${inView} in view.`);
    // By onset, as the index answers: the first `last` of the window, of which rows `first` on are drawn.
    const shown = found.overlapping(from, to, last).slice(first);
    const next = new Map<string, ListedRow>();
    for (const a of shown) {
      const kept = listed.get(a.id);
      next.set(a.id, kept && kept.annotation === a && kept.format === format ? kept : { row: makeRow(a), annotation: a, format });
    }
    // Rows that left first, then the others put in order: a pan moves no row that stays.
    for (const [id, { row }] of listed) if (next.get(id)?.row !== row) row.remove();
    listed = next;
    let at = above.row.nextSibling;
    for (const { row } of next.values()) {
      if (at === row) at = row.nextSibling;
      else body.insertBefore(row, at);
    }
    above.cell.style.height = `${first * rowHeight}px`;
    below.cell.style.height = `${Math.max(0, inView - first - shown.length) * rowHeight}px`;
  };

  return {
    element,
    sync(state) {
      // Closed, or showing the channels: nothing is listed, and the list is drawn again when the panel opens.
      if (!element.isConnected || element.closest('[hidden]')) {
        if (view) {
          view = undefined;
          shownKey = '';
          scrolled = 0;
          scroller.scrollTop = 0;
        }
        return;
      }
      view = { from: state.start / state.rate, to: state.end / state.rate };
      draw();
    },
  };
}
