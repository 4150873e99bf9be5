/**
 * Browser entry of the dataset page's viewer (bundled to /assets/viewer.js). Reads its configuration from
 * the page, opens the chosen recording through the gateway and wires the controls. The server-rendered
 * recording list works without it.
 */
import { RecordingStore } from './recording-store.js';
import { SignalViewer, type ViewerState } from './signal-viewer.js';
import { attachInput } from './viewer-input.js';

export interface ViewerConfig {
  /** The dataset's Zarr copy through the gateway: `<ZARR_CACHE_BASE_URL>/<id>/zarr`. */
  zarrBase: string;
  recordings: Array<{ zarr: string; path: string }>;
  selected: string;
}

declare global {
  interface Window {
    ndsViewer?: ViewerState & { error?: string };
  }
}

const root = document.getElementById('nds-viewer')!;
const config = JSON.parse(document.getElementById('nds-viewer-config')!.textContent!) as ViewerConfig;
const canvas = root.querySelector<HTMLCanvasElement>('canvas')!;
const picker = root.querySelector<HTMLSelectElement>('select[name=recording]');
const status = root.querySelector<HTMLElement>('.viewer-status');
let current: { viewer: SignalViewer; detach: () => void } | undefined;

function describe(s: ViewerState): string {
  const seconds = (n: number) => (n / s.rate).toFixed(s.end - s.start < s.rate ? 3 : 1);
  return `Channels ${s.channelFirst + 1}–${s.channelFirst + s.channelCount} of ${current?.viewer.group.nChannels ?? '?'} · ` +
    `${seconds(s.start)}–${seconds(s.end)} s · ${s.level === 0 ? 'samples' : `view level ${s.level}`}${s.ready ? '' : ' · loading…'}`;
}

async function show(zarr: string): Promise<void> {
  current?.detach();
  current = undefined;
  root.dataset['ready'] = 'false';
  try {
    const store = await RecordingStore.open(`${config.zarrBase}/${zarr}`);
    const [group, events] = await Promise.all([store.group(store.groupNames()[0]!), store.events()]);
    const viewer = new SignalViewer({
      root,
      canvas,
      store,
      recording: zarr,
      group,
      events,
      onState: (state) => {
        // The first complete frame is "traces on screen": a mark the benchmark reads against navigation start.
        if (state.ready && performance.getEntriesByName('nds-traces').length === 0) performance.mark('nds-traces');
        window.ndsViewer = state;
        if (status) status.textContent = describe(state);
      },
    });
    current = { viewer, detach: attachInput(viewer, canvas, root) };
    await viewer.render();
  } catch (err) {
    window.ndsViewer = { ...(window.ndsViewer as ViewerState), ready: false, error: String(err) };
    if (status) status.textContent = `Could not read this recording: ${String(err)}`;
  }
}

picker?.addEventListener('change', () => {
  const url = new URL(location.href);
  url.searchParams.set('recording', picker.value);
  history.replaceState(null, '', url);
  void show(picker.value);
});
for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-key]')) {
  button.addEventListener('click', () => root.dispatchEvent(new KeyboardEvent('keydown', { key: button.dataset['key']! })));
}
window.addEventListener('resize', () => void current?.viewer.render());
if (config.selected) void show(config.selected);
