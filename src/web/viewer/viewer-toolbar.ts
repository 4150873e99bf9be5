/**
 * The toolbar and side panels: montage, filters, sensitivity per type, rows per page, time format, jump to a
 * time, the channel picker and the event list. Each control edits the viewer's settings; `sync` brings the
 * controls in line with a new frame.
 */
import { defaultScales, formatScale, isVoltage, scaleOf, stepScale, typeKey } from '../../signals/channel-scale.js';
import { stepEvent } from '../../signals/event-marks.js';
import { chainAvailable, chainPairs, formatReference, linkedReferences, longitudinalChain, parseReference, transverseChain } from '../../signals/montage.js';
import { filterChoices, formatCorner } from '../../signals/filter-choices.js';
import type { SignalViewer, ViewerState } from './signal-viewer.js';
import { parseTime, type TimeFormat } from '../../signals/time-format.js';
import type { ViewSettings } from '../../signals/view-settings.js';

export interface Toolbar {
  sync(state: ViewerState): void;
  keys: Record<string, () => void>;
  detach(): void;
}

export interface ToolbarHooks {
  toggleSpectrum(): void;
  toggleHelp(force?: boolean): void;
  /** Shown at the top of the events panel (the annotations in the window). */
  eventsPanelTop?: HTMLElement | undefined;
}

export function attachToolbar(root: HTMLElement, viewer: SignalViewer, hooks: ToolbarHooks): Toolbar {
  const $ = <T extends HTMLElement>(selector: string) => root.querySelector<T>(selector);
  const select = (name: string) => $<HTMLSelectElement>(`select[name=${name}]`);
  const panel = $<HTMLElement>('.viewer-panel');
  const scalesBox = $<HTMLElement>('.viewer-scales');
  const auto = $<HTMLInputElement>('input[name=auto]');
  const gotoBox = $<HTMLInputElement>('input[name=goto]');
  const form = $<HTMLFormElement>('form.viewer-bar');
  const cleanups: Array<() => void> = [];
  const on = <K extends keyof HTMLElementEventMap>(el: HTMLElement | null, type: K, fn: (e: HTMLElementEventMap[K]) => void) => {
    if (!el) return;
    el.addEventListener(type, fn as EventListener);
    cleanups.push(() => el.removeEventListener(type, fn as EventListener));
  };
  const update = (change: (s: ViewSettings) => void) => {
    const next = structuredClone(viewer.settings);
    change(next);
    viewer.setSettings(next);
  };

  // Montage: the choices this recording's labels allow.
  const refSelect = select('ref');
  const sources = viewer.sources;
  const refOptions: Array<[string, string]> = [['', 'own reference'], ['avg', 'common average']];
  if (chainAvailable(sources, longitudinalChain)) refOptions.push([formatReference({ kind: 'bipolar', pairs: chainPairs(sources, longitudinalChain) })!, 'bipolar longitudinal']);
  if (chainAvailable(sources, transverseChain)) refOptions.push([formatReference({ kind: 'bipolar', pairs: chainPairs(sources, transverseChain) })!, 'bipolar transverse']);
  for (const [a, b] of linkedReferences(sources)) refOptions.push([`${a}+${b}`, `linked ${a === 'A1' ? 'ears' : 'mastoids'} ${a}+${b}`]);
  sources.forEach((c) => {
    if (['eeg', 'ieeg'].includes(typeKey(c.type))) refOptions.push([c.label, `ref: ${c.label}`]);
  });
  refOptions.push(['custom', 'bipolar pairs…']);
  if (refSelect) {
    refSelect.replaceChildren(...refOptions.map(([v, t]) => new Option(t, v)));
    on(refSelect, 'change', () => {
      let value = refSelect.value;
      if (value === 'custom') {
        const typed = window.prompt('Bipolar pairs, comma-separated (e.g. Fp1-F7,F7-T7)', formatReference(viewer.settings.reference)?.replace(/^bipolar:/, '') ?? '');
        value = typed ? `bipolar:${typed}` : (formatReference(viewer.settings.reference) ?? '');
      }
      update((s) => (s.reference = parseReference(value, sources)));
    });
  }

  const filterSelect = (name: 'hp' | 'lp' | 'notch') => {
    const el = select(name);
    on(el, 'change', () => update((s) => (s.filter[name] = el!.value ? Number(el!.value) : undefined)));
  };
  filterSelect('hp');
  filterSelect('lp');
  /** The corners offered follow the types of the rows and the rate (an EMG at 2 kHz gets 30 Hz and 500 Hz). */
  let choicesKey = '';
  const fillFilterChoices = () => {
    const types = viewer.rowTypes();
    const key = types.join(',');
    if (key === choicesKey) return;
    choicesKey = key;
    const choices = filterChoices(types, viewer.group.rate);
    for (const name of ['hp', 'lp'] as const) {
      const el = select(name);
      if (!el) continue;
      el.replaceChildren(new Option('off', ''), ...choices[name].map((hz) => new Option(formatCorner(hz), String(hz))));
      el.value = viewer.settings.filter[name] ? String(viewer.settings.filter[name]) : '';
    }
  };
  fillFilterChoices();
  filterSelect('notch');
  on(auto, 'change', () => update((s) => (s.auto = auto!.checked)));
  on(select('rows'), 'change', () => update((s) => (s.rowsPerPage = Number(select('rows')!.value))));
  on(select('time'), 'change', () => {
    update((s) => (s.timeFormat = select('time')!.value as TimeFormat));
    if (panel?.dataset['panel'] === 'events') showEvents();
  });
  on(form, 'submit', (event) => {
    event.preventDefault();
    jumpTo(gotoBox?.value ?? '');
  });
  const jumpTo = (text: string) => {
    const t = parseTime(text, viewer.settings.timeFormat, viewer.epoch);
    if (t === undefined) {
      gotoBox?.setCustomValidity('Not a time: seconds, h:mm:ss or a clock time');
      gotoBox?.reportValidity();
      return;
    }
    gotoBox?.setCustomValidity('');
    showAt(t);
  };
  /** Puts `seconds` a tenth of the way into the screen. */
  const showAt = (seconds: number) => {
    const w = viewer.window;
    viewer.setWindow({ start: seconds * viewer.group.rate - w.span / 10, span: w.span });
  };

  const scaleAll = (direction: 1 | -1) =>
    update((s) => {
      for (const type of viewer.shownTypes()) {
        const value = scaleOf(s.scales, type);
        if (value !== 'auto') s.scales[type] = stepScale(value, direction);
      }
    });

  // Side panels.
  const showChannels = () => {
    if (!panel) return;
    const s = viewer.settings;
    const shown = new Set(s.shown);
    const types = [...new Set(sources.map((c) => typeKey(c.type)))];
    const box = (checked: boolean, text: string, onChange: (checked: boolean) => void, title?: string) => {
      const label = document.createElement('label');
      const input = document.createElement('input');
      input.type = 'checkbox';
      input.checked = checked;
      input.addEventListener('change', () => onChange(input.checked));
      label.append(input, ` ${text}`);
      if (title) label.title = title;
      return label;
    };
    const setShown = (indices: number[], on: boolean) =>
      update((next) => {
        const kept = next.shown.filter((i) => on || !indices.includes(i));
        const added = on ? indices.filter((i) => !kept.includes(i)) : [];
        next.shown = [...kept, ...added];
        if (next.shown.length === 0) next.shown = [indices[0] ?? 0];
      });
    const heading = document.createElement('h3');
    heading.textContent = 'Channels';
    panel.replaceChildren(
      heading,
      box(s.hideBad, 'hide bad channels', (c) => update((next) => (next.hideBad = c))),
      ...types.map((type) => {
        const members = sources.map((c, i) => [c, i] as const).filter(([c]) => typeKey(c.type) === type).map(([, i]) => i);
        return box(members.every((i) => shown.has(i)), `all ${type.toUpperCase()} (${members.length})`, (c) => setShown(members, c));
      }),
      document.createElement('hr'),
      ...sources.map((c, i) => box(shown.has(i), `${c.label}${c.bad ? ' (bad)' : ''} · ${c.type || 'misc'}`, (checked) => setShown([i], checked))),
    );
  };

  const showEvents = () => {
    if (!panel) return;
    const events = viewer.events;
    const colours = viewer.eventColourMap;
    const heading = document.createElement('h3');
    heading.textContent = `Events (${events.length})`;
    const filters = [...colours].map(([label, colour]) => {
      const l = document.createElement('label');
      const input = document.createElement('input');
      input.type = 'checkbox';
      input.checked = !viewer.hiddenEventTypes.has(label);
      input.addEventListener('change', () => {
        if (input.checked) viewer.hiddenEventTypes.delete(label);
        else viewer.hiddenEventTypes.add(label);
        showEvents();
        void viewer.render();
      });
      const swatch = document.createElement('span');
      swatch.style.cssText = `display:inline-block;width:.8em;height:.8em;background:${colour};margin:0 .3em`;
      l.append(input, swatch, label);
      return l;
    });
    const table = document.createElement('table');
    table.className = 'viewer-events';
    const head = table.createTHead().insertRow();
    // The value column only when the store kept one (`events/table.json`); stores converted before have none.
    const withValue = events.some((e) => e.value !== undefined);
    for (const text of withValue ? ['time', 'type', 'value', 'duration'] : ['time', 'type', 'duration']) head.insertCell().textContent = text;
    const body = table.createTBody();
    events.forEach((e, i) => {
      if (viewer.hiddenEventTypes.has(e.label)) return;
      const row = body.insertRow();
      row.dataset['index'] = String(i);
      row.insertCell().textContent = viewer.formatTime(e.onset, 0.001);
      // Type and value may be long (HED strings, file markers): they are cut with an ellipsis, the full text in
      // the title, so time and duration stay inside the panel.
      const clipped = (text: string) => {
        const span = document.createElement('span');
        span.className = 'clip';
        span.textContent = text;
        span.title = text;
        return span;
      };
      const name = row.insertCell();
      name.append(clipped(e.label));
      name.style.color = colours.get(e.label) ?? '';
      if (withValue) row.insertCell().append(clipped(e.value ?? ''));
      row.insertCell().textContent = e.duration > 0 ? `${e.duration.toFixed(3)} s` : '';
      row.addEventListener('click', () => showAt(e.onset));
    });
    panel.replaceChildren(...(hooks.eventsPanelTop ? [hooks.eventsPanelTop] : []), heading, ...filters, table);
    markEvents();
  };
  /** Highlights the listed events that are on screen. */
  const markEvents = () => {
    if (panel?.dataset['panel'] !== 'events') return;
    const w = viewer.window;
    const from = w.start / viewer.group.rate;
    const to = (w.start + w.span) / viewer.group.rate;
    let first: HTMLElement | undefined;
    // Event rows only: the annotations listed above them are rows too.
    for (const row of panel.querySelectorAll<HTMLTableRowElement>('tbody tr[data-index]')) {
      const e = viewer.events[Number(row.dataset['index'])]!;
      const on = e.onset + e.duration >= from && e.onset < to;
      if (on) {
        row.setAttribute('aria-current', 'true');
        first ??= row;
      } else row.removeAttribute('aria-current');
    }
    first?.scrollIntoView({ block: 'nearest' });
  };
  const togglePanel = (name: string) => {
    if (!panel) return;
    const open = panel.hidden || panel.dataset['panel'] !== name;
    panel.hidden = !open;
    panel.dataset['panel'] = open ? name : '';
    for (const b of root.querySelectorAll<HTMLButtonElement>('button[data-panel]')) b.setAttribute('aria-pressed', String(open && b.dataset['panel'] === name));
    if (open && name === 'channels') showChannels();
    if (open && name === 'events') showEvents();
    void viewer.render();
  };
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-panel]')) {
    const name = button.dataset['panel']!;
    on(button, 'click', () => (name === 'spectrum' ? hooks.toggleSpectrum() : togglePanel(name)));
  }

  const stepToEvent = (direction: 1 | -1) => {
    const w = viewer.window;
    const here = (w.start + w.span / 10) / viewer.group.rate;
    const i = stepEvent(viewer.events, here, direction, viewer.hiddenEventTypes);
    if (i !== undefined) showAt(viewer.events[i]!.onset);
  };

  const keys: Record<string, () => void> = {
    n: () => stepToEvent(1),
    p: () => stepToEvent(-1),
    '[': () => scaleAll(-1),
    ']': () => scaleAll(1),
    a: () => update((s) => (s.auto = !s.auto)),
    b: () => update((s) => (s.hideBad = !s.hideBad)),
    s: () => hooks.toggleSpectrum(),
    f: () => void (document.fullscreenElement ? document.exitFullscreen() : root.requestFullscreen?.()).catch?.(() => undefined),
    '?': () => hooks.toggleHelp(),
    Escape: () => hooks.toggleHelp(false),
  };

  let eventsShown = -1;
  /** The settings the controls show: a frame with the same settings (a pan) leaves them as they are. */
  let syncedSettings: ViewSettings | undefined;
  let shownScales = '';
  let channelsKey = '';
  return {
    keys,
    sync(state) {
      const s = viewer.settings;
      if (s !== syncedSettings) syncControls(state, s);
      if (panel?.dataset['panel'] === 'events') {
        if (eventsShown !== viewer.events.length) {
          eventsShown = viewer.events.length;
          showEvents();
        } else markEvents();
      }
      const key = `${s.shown.join(',')}|${s.hideBad}`;
      if (panel?.dataset['panel'] === 'channels' && key !== channelsKey) showChannels();
      channelsKey = key;
    },
    detach() {
      for (const c of cleanups) c();
    },
  };

  function syncControls(state: ViewerState, s: ViewSettings): void {
    syncedSettings = s;
    const setValue = (el: HTMLSelectElement | null, value: string, text = value) => {
      if (!el) return;
      if (![...el.options].some((o) => o.value === value)) el.add(new Option(text, value));
      el.value = value;
    };
    fillFilterChoices();
    setValue(refSelect, formatReference(s.reference) ?? '', formatReference(s.reference));
    setValue(select('hp'), s.filter.hp ? String(s.filter.hp) : '', formatCorner(s.filter.hp ?? 0));
    setValue(select('lp'), s.filter.lp ? String(s.filter.lp) : '', formatCorner(s.filter.lp ?? 0));
    setValue(select('notch'), s.filter.notch ? String(s.filter.notch) : '');
    setValue(select('rows'), String(s.rowsPerPage));
    setValue(select('time'), s.timeFormat);
    if (auto) auto.checked = s.auto;
    const scalesKey = `${viewer.shownTypes().join(',')}|${JSON.stringify(s.scales)}|${s.auto}`;
    if (scalesBox && scalesKey !== shownScales) {
      shownScales = scalesKey;
      // The unit of a type's voltage rows (a row in ARU typed EEG has no sensitivity and does not name it).
      const units = new Map(state.rows.filter((r) => isVoltage(r.unit)).map((r) => [typeKey(r.type), r.unit]));
      scalesBox.replaceChildren(
        ...viewer.shownTypes().flatMap((type) => {
          const value = s.auto ? 'auto' : scaleOf(s.scales, type);
          if (value === 'auto') return [];
          const span = document.createElement('span');
          const minus = document.createElement('button');
          minus.type = 'button';
          minus.textContent = '−';
          minus.title = `${type.toUpperCase()}: more sensitive`;
          minus.addEventListener('click', () => update((n) => (n.scales[type] = stepScale(value, -1))));
          const plus = document.createElement('button');
          plus.type = 'button';
          plus.textContent = '+';
          plus.title = `${type.toUpperCase()}: less sensitive`;
          plus.addEventListener('click', () => update((n) => (n.scales[type] = stepScale(value, 1))));
          const text = document.createElement('span');
          text.dataset['type'] = type;
          text.textContent = `${type.toUpperCase()} ${formatScale(value, units.get(type) ?? 'µV')}`;
          text.title = value === defaultScales[type] ? 'per division (the default)' : 'per division';
          span.append(minus, text, plus);
          return [span];
        }),
      );
    }
  }
}
