/**
 * Browser entry of the dataset page's viewer (bundled to /assets/viewer.js). Reads its configuration from
 * the page and the view from the address, opens the chosen recording and channel group through the gateway,
 * wires the toolbar, pointer and panels, and keeps the address in step with the view so a link reopens it.
 * The server-rendered recording list works without it.
 */
import { readGrantFetch, type ReadGrantConfig } from './read-grant-fetch.js';
import { RecordingStore, warmCodecs, type EmbeddedMetadata, type EventMarker } from './recording-store.js';
import { attachPointer } from './pointer-readout.js';
import { SignalViewer, type ViewerState } from './signal-viewer.js';
import { drawSpectrum, type SpectrumState } from './spectrum-panel.js';
import { recordingEpoch } from '../../signals/time-format.js';
import { parseViewQuery, writeViewQuery } from '../../signals/view-settings.js';
import { attachInput } from './viewer-input.js';
import { attachToolbar } from './viewer-toolbar.js';
import { attachAnnotationEditor, type AnnotationAccess } from './annotation-editor.js';
import { annotationList } from './annotation-list.js';
import { AnnotationSync } from './annotation-sync.js';

export interface ViewerConfig {
  /** The dataset's Zarr copy through the gateway: `<ZARR_CACHE_BASE_URL>/<id>/zarr`. */
  zarrBase: string;
  recordings: Array<{ zarr: string; path: string }>;
  selected: string;
  /** Channel group shown first; the store's first when absent or unknown. */
  group?: string;
  /** The selected store's metadata documents, embedded by the page to save round trips. */
  metadata?: EmbeddedMetadata;
  /** A private dataset's read grant: the gateway answers its reads only with it. */
  readGrant?: ReadGrantConfig;
  /** The recordings' annotations: where they are read and written, and what the caller may do with them. */
  annotations?: AnnotationAccess & { url: string };
}

declare global {
  interface Window {
    ndsViewer?: ViewerState & { error?: string; spectrum?: SpectrumState | undefined };
  }
}

const root = document.getElementById('nds-viewer')!;
const config = JSON.parse(document.getElementById('nds-viewer-config')!.textContent!) as ViewerConfig;
if (config.metadata) warmCodecs(config.metadata);
const gatewayFetch = config.readGrant ? readGrantFetch(config.readGrant) : undefined;
const canvas = root.querySelector<HTMLCanvasElement>('canvas.viewer-traces')!;
const overlay = root.querySelector<HTMLCanvasElement>('canvas.viewer-overlay')!;
const picker = root.querySelector<HTMLSelectElement>('select[name=recording]');
const groupPicker = root.querySelector<HTMLSelectElement>('select[name=group]');
const groupLabel = root.querySelector<HTMLElement>('.viewer-groups');
const status = root.querySelector<HTMLElement>('.viewer-status');
const note = root.querySelector<HTMLElement>('.viewer-note');
const readout = root.querySelector<HTMLElement>('.viewer-readout');
const spectrumBox = root.querySelector<HTMLElement>('.viewer-spectrum');
const spectrumPick = root.querySelector<HTMLSelectElement>('select[name=spectrogram]');
const help = root.querySelector<HTMLElement>('.viewer-help');
let opened: { zarr: string; store: RecordingStore; events: Promise<EventMarker[]> } | undefined;
let current: { viewer: SignalViewer; detach: () => void } | undefined;
let shown = 0;
/** The address is read once, for the first recording shown; later views start from their defaults. */
let fromAddress = true;

function describe(viewer: SignalViewer, s: ViewerState): string {
  const resolution = (s.end - s.start) / s.rate / 100;
  const group = (opened?.store.groupNames().length ?? 0) > 1 ? `${s.group} · ` : '';
  const rows = s.totalRows > s.channelCount ? `rows ${s.channelFirst + 1}–${s.channelFirst + s.channelCount} of ${s.totalRows}` : `${s.totalRows} rows`;
  const filters = [s.filter.hp && `HP ${s.filter.hp} Hz`, s.filter.lp && `LP ${s.filter.lp} Hz`, s.filter.notch && `notch ${s.filter.notch} Hz`].filter(Boolean).join(', ');
  const processing = s.level === 0 ? [s.reference !== 'own' ? `ref ${s.reference.replace(/^bipolar:.*/, 'bipolar')}` : '', filters].filter(Boolean).join(' · ') : '';
  const annotations = s.annotationsTotal > 0 ? ` · ${s.annotationsInView} of ${s.annotationsTotal} annotations in view${s.annotationMode === 'density' ? ' (as their density: zoom in to edit)' : ''}` : '';
  return `${group}${rows} · ${viewer.formatTime(s.start / s.rate, resolution)} – ${viewer.formatTime(s.end / s.rate, resolution)} · ` +
    `${s.level === 0 ? 'samples' : `view level ${s.level}`}${processing ? ` · ${processing}` : ''}${annotations}${s.ready ? '' : ' · loading…'}`;
}

/** The group picker lists the store's groups (`channel_groups`), shown only when there is a choice. */
function fillGroups(store: RecordingStore, selected: string): void {
  if (!groupPicker) return;
  const groups = (store.attrs['channel_groups'] as Array<{ name: string; rate?: number; n_channels?: number }> | undefined) ?? [];
  groupPicker.replaceChildren(
    ...groups.map((g) => {
      const option = new Option(`${g.name} (${g.n_channels ?? '?'} ch, ${g.rate ?? '?'} Hz)`, g.name);
      option.selected = g.name === selected;
      return option;
    }),
  );
  if (groupLabel) groupLabel.hidden = groups.length < 2;
}

let urlTimer: ReturnType<typeof setTimeout> | undefined;
/** Writes the view into the address, at most every 250 ms (replaceState: no history entry per scrub). */
function keepInAddress(viewer: SignalViewer): void {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    if (current?.viewer !== viewer) return;
    const url = new URL(location.href);
    const w = viewer.window;
    writeViewQuery(url.searchParams, { settings: viewer.settings, startSeconds: w.start / viewer.group.rate, spanSeconds: w.span / viewer.group.rate }, viewer.sources);
    history.replaceState(null, '', url);
  }, 250);
}

let spectrumOpen = false;
let spectrumKey = '';
let lastSpectrum: SpectrumState | undefined;
let spectrumTimer: ReturnType<typeof setTimeout> | undefined;
/** The spectrum follows the window once it stops moving for a moment (Welch over 64 rows is not free). */
function updateSpectrum(viewer: SignalViewer, state: ViewerState): void {
  clearTimeout(spectrumTimer);
  if (!spectrumOpen || !spectrumBox || !state.tracesReady) return;
  spectrumTimer = setTimeout(() => current?.viewer === viewer && window.ndsViewer === state && computeSpectrum(state), 120);
}

function computeSpectrum(state: ViewerState): void {
  if (!spectrumBox) return;
  const key = `${state.start}|${state.end}|${state.renders > 0 ? state.rows.map((r) => r.label).join(',') : ''}|${state.reference}|${JSON.stringify(state.filter)}|${spectrumPick?.value}|${state.level}`;
  if (key === spectrumKey) {
    if (window.ndsViewer === state && lastSpectrum) window.ndsViewer = { ...state, spectrum: lastSpectrum };
    return;
  }
  spectrumKey = key;
  if (spectrumPick) {
    const labels = state.rows.map((r) => r.label);
    if ([...spectrumPick.options].map((o) => o.value).join('\n') !== labels.join('\n')) {
      const keep = spectrumPick.value;
      spectrumPick.replaceChildren(...labels.map((l) => new Option(l, l)));
      if (labels.includes(keep)) spectrumPick.value = keep;
    }
  }
  const spectrum = drawSpectrum(state, spectrumBox.querySelector('canvas.viewer-psd')!, spectrumBox.querySelector('canvas.viewer-spectrogram')!, spectrumPick?.value ?? '', spectrumBox.querySelector('.viewer-spectrum-note'), spectrumBox.querySelector<HTMLElement>('.viewer-spectrum-legend'));
  lastSpectrum = spectrum;
  if (window.ndsViewer === state) window.ndsViewer = { ...state, spectrum };
}

function toggleSpectrum(): void {
  spectrumOpen = !spectrumOpen;
  if (spectrumBox) spectrumBox.hidden = !spectrumOpen;
  root.querySelector('button[data-panel=spectrum]')?.setAttribute('aria-pressed', String(spectrumOpen));
  spectrumKey = '';
  if (current) void current.viewer.render();
}

function toggleHelp(force?: boolean): void {
  if (help) help.hidden = force === undefined ? !help.hidden : !force;
}

/** Taller plot for many rows, so a row keeps at least 14 px. */
function fitHeight(rows: number): void {
  const height = `${Math.max(560, 42 + rows * 14)}px`;
  if (canvas.style.height !== height) {
    canvas.style.height = height;
    overlay.style.height = height;
  }
}

/**
 * Shows `group` (default: the store's first) of recording `zarr`. Switching groups of the same
 * recording keeps the time on screen; a newer call supersedes one still opening.
 */
async function show(zarr: string, group?: string, metadata?: EmbeddedMetadata): Promise<void> {
  const generation = ++shown;
  const previous = current && opened?.zarr === zarr ? current.viewer : undefined;
  const keep = previous && { start: previous.window.start / previous.group.rate, span: previous.window.span / previous.group.rate };
  current?.detach();
  current = undefined;
  root.dataset['ready'] = 'false';
  try {
    if (opened?.zarr !== zarr) {
      const store = await RecordingStore.open(`${config.zarrBase}/${zarr}`, { metadata, fetch: gatewayFetch });
      // Markers load alongside the first chunks; the traces do not wait for them.
      opened = { zarr, store, events: store.events().catch(() => []) };
    }
    const { store, events } = opened;
    const names = store.groupNames();
    const name = group !== undefined && names.includes(group) ? group : names[0]!;
    fillGroups(store, name);
    const meta = await store.group(name);
    if (generation !== shown) return;
    const sources = meta.channels.map((c) => ({ label: c.label, type: c.type, unit: c.unit, bad: c.status === 'bad' }));
    const query = parseViewQuery(new URL(location.href).searchParams, sources);
    const fromUrl = fromAddress;
    fromAddress = false;
    const settings = fromUrl ? query.settings : previous ? { ...previous.settings, shown: query.settings.shown, reference: { kind: 'own' as const } } : query.settings;
    fitHeight(settings.rowsPerPage);
    const recording = store.attrs['recording'] as { start_time?: unknown } | undefined;
    const viewer = new SignalViewer({
      root,
      canvas,
      store,
      recording: zarr,
      group: meta,
      settings,
      epoch: recordingEpoch(recording?.start_time),
      initialStartSeconds: keep?.start ?? (fromUrl ? query.startSeconds : undefined),
      initialSeconds: keep?.span ?? (fromUrl ? query.spanSeconds : undefined),
      onState: (state) => {
        // The first complete frame of traces is "traces on screen": a mark the benchmark reads against navigation start.
        if (state.tracesReady && performance.getEntriesByName('nds-traces').length === 0) performance.mark('nds-traces');
        window.ndsViewer = state;
        fitHeight(viewer.settings.rowsPerPage);
        if (status) status.textContent = describe(viewer, state);
        if (note) note.textContent = state.note;
        toolbar.sync(state);
        list?.sync(state);
        updateSpectrum(viewer, state);
        keepInAddress(viewer);
      },
    });
    // Annotations load beside the traces and the markers; the traces do not wait for them either.
    const access = config.annotations;
    const sync = access
      ? new AnnotationSync({
          url: access.url,
          path: config.recordings.find((r) => r.zarr === zarr)?.path ?? zarr,
          // A poll answered after the recording was left must not draw on the canvas the next one uses.
          onChange: (index) => current?.viewer === viewer && viewer.setAnnotations(index),
          onError: (message) => (root.dataset['annotationError'] = message),
        })
      : undefined;
    const editor = sync && access ? attachAnnotationEditor(root, canvas, viewer, sync, access) : undefined;
    const list = editor ? annotationList(viewer, () => viewer.annotations, editor, access?.annotate ?? false) : undefined;
    const toolbar = attachToolbar(root, viewer, { toggleSpectrum, toggleHelp, eventsPanelTop: list?.element });
    const keys = {
      ...toolbar.keys,
      Escape: () => {
        toggleHelp(false);
        editor?.cancel();
      },
    };
    const detachInput = attachInput(viewer, canvas, root, keys, () => editor?.active ?? false);
    const detachPointer = attachPointer(viewer, canvas, overlay, readout);
    current = {
      viewer,
      detach: () => {
        sync?.stop();
        editor?.detach();
        detachInput();
        detachPointer();
        toolbar.detach();
      },
    };
    void sync?.start().catch((err: unknown) => (root.dataset['annotationError'] = String(err instanceof Error ? err.message : err)));
    void events.then((markers) => current?.viewer === viewer && viewer.setEvents(markers));
    await viewer.render();
  } catch (err) {
    if (generation !== shown) return;
    window.ndsViewer = { ...(window.ndsViewer as ViewerState), ready: false, error: String(err) };
    if (status) status.textContent = `Could not read this recording: ${String(err)}`;
  }
}

function setQuery(name: string, value: string | undefined): void {
  const url = new URL(location.href);
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  history.replaceState(null, '', url);
}

picker?.addEventListener('change', () => {
  setQuery('recording', picker.value);
  setQuery('group', undefined);
  void show(picker.value);
});
groupPicker?.addEventListener('change', () => {
  setQuery('group', groupPicker.value);
  if (opened) void show(opened.zarr, groupPicker.value);
});
spectrumPick?.addEventListener('change', () => current && void current.viewer.render());
for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-key]')) {
  button.addEventListener('click', () => root.dispatchEvent(new KeyboardEvent('keydown', { key: button.dataset['key']! })));
}
window.addEventListener('resize', () => void current?.viewer.render());
document.addEventListener('fullscreenchange', () => void current?.viewer.render());
if (config.selected) void show(config.selected, config.group, config.metadata);
