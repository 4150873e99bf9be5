/** HTML of the dataset pages: the list, and a dataset's details with its recordings and the viewer. */
import type { ConversionFailure } from '../formats/zarr/conversion-failures.js';
import type { Dataset } from '../datasets/dataset-queries.js';
import type { StoreIndex, StoreIndexEntry } from '../formats/zarr/store-index.js';
import type { StoreDocuments } from './dataset-page-data.js';
import { zarrState } from './dataset-cards.js';
import { html, SafeHtml } from './html.js';
import { viewerScriptPath } from './viewer-bundle.js';
import { viewerStylesheetPath } from './viewer-css.js';

/** The head of the dataset pages: the viewer's style sheet (no inline style: docs/security.md) and an empty icon. */
export const viewerStyle = html`<link rel="stylesheet" href="${viewerStylesheetPath}">
<link rel="icon" href="data:,">`;

export function datasetListBody(datasets: Dataset[]): SafeHtml {
  if (datasets.length === 0) return html`<h1>Datasets</h1><p class="muted">No datasets yet.</p>`;
  return html`<h1>Datasets</h1>
<p><a href="/">Search datasets</a> by words, modality, task, sampling rate or channel count.</p>
<table>
<thead><tr><th>ID</th><th>Name</th><th>Owner</th><th>Modalities</th><th>Subjects</th><th>Visibility</th></tr></thead>
<tbody>${datasets.map(
    (d) => html`<tr><td><a href="/datasets/${d.id}" class="mono">${d.id}</a></td><td>${d.name}</td><td>${d.owner_username}</td>
<td>${d.modalities.join(', ')}</td><td>${d.n_subjects ?? ''}</td><td>${d.visibility}</td></tr>`,
  )}</tbody>
</table>`;
}

export interface DatasetPageInput {
  dataset: Dataset;
  index: StoreIndex | undefined;
  /** The dataset's Zarr copy through the gateway. */
  zarrBase: string;
  selected: StoreIndexEntry | undefined;
  /** The channel group shown first (`?group=`, else the recording's first). */
  group?: string | undefined;
  /** The selected store's metadata for that group, embedded so the viewer skips those requests. */
  metadata?: StoreDocuments | undefined;
  /** `?embed=1`: the viewer alone. */
  embed?: boolean | undefined;
  /** Recordings the last conversion could not convert, with their reasons. */
  failures?: ConversionFailure[];
  /** A private dataset's read grant for the viewer (owner and admins): the gateway reads it only with one. */
  readGrant?: { grant: string; expires_in: number; refresh: string } | undefined;
  /** The viewer maintains the dataset (owner, maintainer, admin): a link to its settings. */
  manage?: boolean;
  /** The viewer may annotate the dataset's recordings (annotators and up; `docs/workspace.md`). */
  annotate?: boolean;
}

export function datasetDetailBody(input: DatasetPageInput): SafeHtml {
  const { dataset: d, index, selected } = input;
  const viewable = d.visibility === 'public' || input.readGrant !== undefined;
  return html`<h1>${d.name} <span class="muted mono">${d.id}</span></h1>
${d.visibility === 'private' ? html`<p class="notice private" role="status">Private: only its owner, its members and administrators see this dataset and its signals.</p>` : ''}
${input.manage ? html`<p><a href="/datasets/${d.id}/settings">Settings</a> · metadata, members, publication${d.visibility === 'private' ? ', visibility' : ''}</p>` : ''}
${d.description ? html`<p>${d.description}</p>` : ''}
<dl class="facts">
<dt>Owner</dt><dd>${d.owner_username}</dd>
<dt>Visibility</dt><dd>${d.visibility}</dd>
${d.license ? html`<dt>License</dt><dd>${d.license}</dd>` : ''}
${d.authors.length ? html`<dt>Authors</dt><dd>${d.authors.join(', ')}</dd>` : ''}
${d.modalities.length ? html`<dt>Modalities</dt><dd>${d.modalities.join(', ')}</dd>` : ''}
${d.latest_version ? html`<dt>Latest version</dt><dd>${d.latest_version}</dd>` : ''}
${d.doi ? html`<dt>DOI</dt><dd>${d.doi}</dd>` : ''}
<dt>Zarr copy</dt><dd>${zarrState(d)}</dd>
</dl>
${index && index.stores.length ? recordingsSection(index, selected) : html`<p class="muted">${index ? 'No recording of this dataset could be converted yet.' : 'This dataset has no browsable copy yet.'}</p>`}
${d.zarr_status === 'failed' && d.zarr_error ? html`<section class="failures" id="conversion-error"><h2>The conversion failed</h2><p>${d.zarr_error}</p></section>` : ''}
${failuresSection(input.failures ?? [])}
${index && selected && viewable ? viewerSection(input, index, selected) : ''}`;
}

function recordingsSection(index: StoreIndex, selected: StoreIndexEntry | undefined): SafeHtml {
  return html`<h2>Recordings</h2>
<div class="recordings-scroll"><table class="recordings">
<thead><tr><th>Recording</th><th>Channels</th><th>Rate</th><th>Duration</th><th>Events</th></tr></thead>
<tbody>${index.stores.map((s) => {
    const g = s.groups[0];
    return html`<tr${s === selected ? html` aria-current="true"` : ''}><td><a href="?recording=${encodeURIComponent(s.zarr)}">${s.path}</a></td>
<td>${s.groups.reduce((n, x) => n + x.n_channels, 0)}</td><td>${s.groups.map((x) => `${x.rate} Hz`).join(', ')}</td><td>${g ? formatDuration(g.duration_s) : ''}</td><td>${s.n_events}</td></tr>`;
  })}</tbody>
</table></div>
`;
}

/** Each recording that could not be converted, with its code and the reason to act on. */
function failuresSection(failures: ConversionFailure[]): SafeHtml | string {
  if (failures.length === 0) return '';
  return html`<section class="failures" id="conversion-failures">
<h2>${failures.length === 1 ? '1 recording' : `${failures.length} recordings`} could not be converted</h2>
<ul>${failures.map((f) => html`<li><span class="mono">${f.path}</span> <span class="code">${f.code}</span><br>${f.reason}</li>`)}</ul>
</section>`;
}

function viewerSection(input: DatasetPageInput, index: StoreIndex, selected: StoreIndexEntry): SafeHtml {
  const config = {
    zarrBase: input.zarrBase,
    recordings: index.stores.map((s) => ({ zarr: s.zarr, path: s.path })),
    selected: selected.zarr,
    group: input.group ?? selected.groups[0]?.name,
    ...(input.metadata ? { metadata: input.metadata } : {}),
    ...(input.readGrant ? { readGrant: input.readGrant } : {}),
  };
  const groups = selected.groups;
  const options = (values: Array<[string, string]>) => values.map(([value, text]) => html`<option value="${value}">${text}</option>`);
  return html`${input.embed ? '' : html`<h2>Signals</h2>`}
<section class="viewer" id="nds-viewer" tabindex="0" data-ready="false" aria-label="Signal viewer">
<form class="viewer-bar" method="get">
<label>Recording <select name="recording">${index.stores.map((s) => html`<option value="${s.zarr}"${s === selected ? html` selected` : ''}>${s.path}</option>`)}</select></label>
<label class="viewer-groups"${groups.length > 1 ? '' : html` hidden`}>Channels <select name="group">${groups.map((g) => html`<option value="${g.name}"${g.name === config.group ? html` selected` : ''}>${g.name} (${g.n_channels} ch, ${g.rate} Hz)</option>`)}</select></label>
${input.embed ? html`<input type="hidden" name="embed" value="1">` : ''}
<noscript><button type="submit">Show</button></noscript>
<span class="viewer-tools">
<label title="Reference or montage">Montage <select name="ref"><option value="">own reference</option></select></label>
<label title="High-pass (display only, level 0)">HP <select name="hp">${options([['', 'off'], ['0.1', '0.1 Hz'], ['0.3', '0.3 Hz'], ['0.5', '0.5 Hz'], ['1', '1 Hz'], ['2', '2 Hz'], ['5', '5 Hz']])}</select></label>
<label title="Low-pass (display only, level 0)">LP <select name="lp">${options([['', 'off'], ['15', '15 Hz'], ['30', '30 Hz'], ['35', '35 Hz'], ['40', '40 Hz'], ['70', '70 Hz'], ['100', '100 Hz']])}</select></label>
<label title="Line-noise notch with harmonics">Notch <select name="notch">${options([['', 'off'], ['50', '50 Hz'], ['60', '60 Hz']])}</select></label>
<span class="viewer-scales" title="Sensitivity per channel type: [ and ] for all"></span>
<label title="Each row scaled to its own range (a)"><input type="checkbox" name="auto"> auto</label>
<label>Rows <select name="rows">${options(['8', '16', '24', '32', '48', '64'].map((n) => [n, n]))}</select></label>
<label>Time <select name="time">${options([['s', 'seconds'], ['hms', 'h:mm:ss'], ['clock', 'clock']])}</select></label>
<input name="goto" size="9" placeholder="go to time" aria-label="Go to time" title="Go to a time (seconds, h:mm:ss, or a clock time)">
</span>
<span class="viewer-tools">
<button type="button" data-key="PageUp" title="Previous rows (PageUp)">▲ rows</button>
<button type="button" data-key="PageDown" title="Next rows (PageDown)">▼ rows</button>
<button type="button" data-key="-" title="Zoom out (−)">−</button>
<button type="button" data-key="+" title="Zoom in (+)">+</button>
<button type="button" data-key="p" title="Previous event (p)">◀ event</button>
<button type="button" data-key="n" title="Next event (n)">event ▶</button>
<button type="button" data-panel="channels" aria-pressed="false">Channels</button>
<button type="button" data-panel="events" aria-pressed="false">Events</button>
<button type="button" data-panel="spectrum" aria-pressed="false" title="Spectrum (s)">Spectrum</button>
<button type="button" data-key="f" title="Full screen (f)">Full screen</button>
<button type="button" data-key="?" title="Keys (?)">?</button>
</span>
</form>
<div class="viewer-lines"><span class="viewer-status">Loading…</span> <span class="viewer-note"></span> <span class="viewer-readout"></span></div>
<div class="viewer-main"><div class="viewer-plot"><canvas class="viewer-traces"></canvas><canvas class="viewer-overlay"></canvas></div><aside class="viewer-panel" hidden></aside></div>
<div class="viewer-spectrum" hidden><div class="viewer-spectrum-head">Power spectral density (Welch) of the rows on screen · spectrogram of <select name="spectrogram"></select> · <span class="viewer-spectrum-note"></span></div><figure class="viewer-psd-box"><canvas class="viewer-psd"></canvas><ul class="viewer-spectrum-legend" aria-label="Legend"></ul></figure><canvas class="viewer-spectrogram"></canvas></div>
<div class="viewer-help" hidden role="dialog" aria-label="Keys"><h3>Keys</h3><dl>
<dt>drag · wheel</dt><dd>scrub · zoom around the pointer</dd><dt>Shift + drag</dt><dd>ruler: interval and amplitude</dd>
<dt>← → (Shift)</dt><dd>scrub a tenth (a whole screen)</dd><dt>+ −</dt><dd>zoom</dd><dt>PageUp PageDown</dt><dd>rows</dd><dt>Home End</dt><dd>start, end</dd>
<dt>[ ]</dt><dd>more, less sensitive (all types)</dd><dt>a</dt><dd>auto scale on/off</dd><dt>G g</dt><dd>auto scale: double, halve the gain</dd><dt>n p</dt><dd>next, previous event</dd><dt>b</dt><dd>hide bad channels</dd>
<dt>s</dt><dd>spectrum</dd><dt>f</dt><dd>full screen</dd><dt>?</dt><dd>this help (Esc closes)</dd></dl></div>
</section>
${input.embed ? '' : html`<p class="muted">Drag to scrub, wheel to zoom, Shift+drag to measure; press ? in the viewer for the keys. The address keeps the view: copy it to share it.</p>`}
<script type="application/json" id="nds-viewer-config">${jsonForScript(config)}</script>
<script type="module" src="${viewerScriptPath}"></script>`;
}

/** The viewer alone (`?embed=1`), for an iframe: no header, no recording list. */
export function embeddedViewerPage(input: DatasetPageInput, head: SafeHtml): string {
  const { index, selected } = input;
  const body = index && selected ? viewerSection({ ...input, embed: true }, index, selected) : html`<p>No browsable copy.</p>`;
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.dataset.name} · nds viewer</title><link rel="stylesheet" href="/assets/nds.css">${head}</head>
<body class="viewer-embed">${body}</body></html>`.value}`;
}

/** JSON safe inside a <script> element: no `<` can close it. */
function jsonForScript(value: unknown): SafeHtml {
  return new SafeHtml(JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'));
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min ${s} s`;
}
