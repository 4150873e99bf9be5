/**
 * Browser entry of the dataset page's viewer (bundled to /assets/viewer.js). Reads its configuration from
 * the page, opens the chosen recording and channel group through the gateway and wires the controls. The
 * server-rendered recording list works without it.
 */
import { readGrantFetch, type ReadGrantConfig } from './read-grant-fetch.js';
import { RecordingStore, warmCodecs, type EmbeddedMetadata, type EventMarker } from './recording-store.js';
import { SignalViewer, type ViewerState } from './signal-viewer.js';
import { attachInput } from './viewer-input.js';

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
}

declare global {
  interface Window {
    ndsViewer?: ViewerState & { error?: string };
  }
}

const root = document.getElementById('nds-viewer')!;
const config = JSON.parse(document.getElementById('nds-viewer-config')!.textContent!) as ViewerConfig;
if (config.metadata) warmCodecs(config.metadata);
const gatewayFetch = config.readGrant ? readGrantFetch(config.readGrant) : undefined;
const canvas = root.querySelector<HTMLCanvasElement>('canvas')!;
const picker = root.querySelector<HTMLSelectElement>('select[name=recording]');
const groupPicker = root.querySelector<HTMLSelectElement>('select[name=group]');
const groupLabel = root.querySelector<HTMLElement>('.viewer-groups');
const status = root.querySelector<HTMLElement>('.viewer-status');
let opened: { zarr: string; store: RecordingStore; events: Promise<EventMarker[]> } | undefined;
let current: { viewer: SignalViewer; detach: () => void } | undefined;
let shown = 0;

function describe(s: ViewerState): string {
  const seconds = (n: number) => (n / s.rate).toFixed(s.end - s.start < s.rate ? 3 : 1);
  const group = (opened?.store.groupNames().length ?? 0) > 1 ? `${s.group} · ` : '';
  return `${group}Channels ${s.channelFirst + 1}–${s.channelFirst + s.channelCount} of ${current?.viewer.group.nChannels ?? '?'} · ` +
    `${seconds(s.start)}–${seconds(s.end)} s · ${s.level === 0 ? 'samples' : `view level ${s.level}`}${s.ready ? '' : ' · loading…'}`;
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
    const viewer = new SignalViewer({
      root,
      canvas,
      store,
      recording: zarr,
      group: meta,
      initialStartSeconds: keep?.start,
      initialSeconds: keep?.span,
      onState: (state) => {
        // The first complete frame of traces is "traces on screen": a mark the benchmark reads against navigation start.
        if (state.tracesReady && performance.getEntriesByName('nds-traces').length === 0) performance.mark('nds-traces');
        window.ndsViewer = state;
        if (status) status.textContent = describe(state);
      },
    });
    current = { viewer, detach: attachInput(viewer, canvas, root) };
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
for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-key]')) {
  button.addEventListener('click', () => root.dispatchEvent(new KeyboardEvent('keydown', { key: button.dataset['key']! })));
}
window.addEventListener('resize', () => void current?.viewer.render());
if (config.selected) void show(config.selected, config.group, config.metadata);
