/** HTML of the dataset pages: the list, and a dataset's details with its recordings and the viewer. */
import type { ConversionFailure } from '../conversion/conversion-failures.js';
import type { Dataset } from '../datasets/dataset-queries.js';
import type { StoreIndex, StoreIndexEntry } from '../formats/zarr/store-index.js';
import type { StoreMetadata } from './dataset-page-data.js';
import { zarrState } from './dataset-cards.js';
import { html, SafeHtml } from './html.js';
import { viewerScriptPath } from './viewer-bundle.js';

export const viewerStyle = html`<style>
main { max-width: 82rem; }
.viewer { outline: none; background: #fff; border: 1px solid var(--line, #d8dee4); border-radius: 6px; padding: .5rem; }
.viewer:focus-visible { border-color: var(--accent, #1f5fbf); }
.viewer-bar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .4rem; font-size: .9rem; }
.viewer-bar label { display: flex; gap: .4rem; align-items: center; }
.viewer-bar button { padding: .2rem .6rem; }
.viewer-bar [hidden] { display: none; }
.viewer canvas { display: block; width: 100%; height: 560px; cursor: grab; }
.viewer-status { color: var(--muted, #5f6b76); font-size: .85rem; }
.notice.private { color: #6b4e00; border-color: #d4a72c; background: #fff8e1; }
.failures { background: #fff; border: 1px solid var(--bad, #b42318); border-radius: 6px; padding: .25rem 1rem; margin: 1rem 0; }
.failures h2 { color: var(--bad, #b42318); }
.failures li { margin: .4rem 0; overflow-wrap: anywhere; }
.failures .code { font-family: ui-monospace, Menlo, monospace; font-size: .85rem; color: var(--bad, #b42318); }
</style>
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
  metadata?: StoreMetadata | undefined;
  /** Recordings the last conversion could not convert, with their reasons. */
  failures?: ConversionFailure[];
  /** A private dataset's read grant for the viewer (owner and admins): the gateway reads it only with one. */
  readGrant?: { grant: string; expires_in: number; refresh: string } | undefined;
  /** The viewer may change the dataset (owner, admin): a link to its settings. */
  manage?: boolean;
}

export function datasetDetailBody(input: DatasetPageInput): SafeHtml {
  const { dataset: d, index, selected } = input;
  const viewable = d.visibility === 'public' || input.readGrant !== undefined;
  return html`<h1>${d.name} <span class="muted mono">${d.id}</span></h1>
${d.visibility === 'private' ? html`<p class="notice private" role="status">Private: only its owner and administrators see this dataset and its signals.</p>` : ''}
${input.manage ? html`<p><a href="/datasets/${d.id}/settings">Settings</a> · metadata, publication${d.visibility === 'private' ? ', visibility' : ''}</p>` : ''}
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
${failuresSection(input.failures ?? [])}
${index && selected && viewable ? viewerSection(input, index, selected) : ''}`;
}

function recordingsSection(index: StoreIndex, selected: StoreIndexEntry | undefined): SafeHtml {
  return html`<h2>Recordings</h2>
<table class="recordings">
<thead><tr><th>Recording</th><th>Channels</th><th>Rate</th><th>Duration</th><th>Events</th></tr></thead>
<tbody>${index.stores.map((s) => {
    const g = s.groups[0];
    return html`<tr${s === selected ? html` aria-current="true"` : ''}><td><a href="?recording=${encodeURIComponent(s.zarr)}">${s.path}</a></td>
<td>${s.groups.reduce((n, x) => n + x.n_channels, 0)}</td><td>${s.groups.map((x) => `${x.rate} Hz`).join(', ')}</td><td>${g ? formatDuration(g.duration_s) : ''}</td><td>${s.n_events}</td></tr>`;
  })}</tbody>
</table>
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
  return html`<h2>Signals</h2>
<section class="viewer" id="nds-viewer" tabindex="0" data-ready="false" aria-label="Signal viewer">
<form class="viewer-bar" method="get">
<label>Recording <select name="recording">${index.stores.map((s) => html`<option value="${s.zarr}"${s === selected ? html` selected` : ''}>${s.path}</option>`)}</select></label>
<label class="viewer-groups"${groups.length > 1 ? '' : html` hidden`}>Channels <select name="group">${groups.map((g) => html`<option value="${g.name}"${g.name === config.group ? html` selected` : ''}>${g.name} (${g.n_channels} ch, ${g.rate} Hz)</option>`)}</select></label>
<noscript><button type="submit">Show</button></noscript>
<button type="button" data-key="PageUp" title="Previous channels (PageUp)">▲ channels</button>
<button type="button" data-key="PageDown" title="Next channels (PageDown)">▼ channels</button>
<button type="button" data-key="+" title="Zoom in (+)">+</button>
<button type="button" data-key="-" title="Zoom out (−)">−</button>
<button type="button" data-key="G" title="More gain (G)">gain ×2</button>
<button type="button" data-key="g" title="Less gain (g)">gain ÷2</button>
<span class="viewer-status">Loading…</span>
</form>
<canvas></canvas>
<p class="muted">Drag to scrub, wheel to zoom around the cursor; ←/→ scrub (Shift: a whole screen), +/− zoom, PageUp/PageDown change channels, Home/End jump.</p>
</section>
<script type="application/json" id="nds-viewer-config">${jsonForScript(config)}</script>
<script type="module" src="${viewerScriptPath}"></script>`;
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
