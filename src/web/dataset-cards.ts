/**
 * HTML of the home page: the search form with its facets, result cards, paging, and a signed-in person's
 * own datasets with what needs their action.
 */
import { zarrFailureCount } from '../datasets/present-dataset.js';
import type { Dataset } from '../datasets/dataset-queries.js';
import type { Facets } from '../datasets/search-filters.js';
import { html, type SafeHtml } from './html.js';

/** What the search form holds, as typed (strings), and the page number. */
export interface HomeQuery {
  q: string;
  modality: string;
  task: string;
  sampling_rate: string;
  channels: string;
  min_subjects: string;
  page: number;
}

export const PAGE_SIZE = 10;

interface RecordingSummary {
  n_recordings?: number;
  duration_s?: number;
}

function recordingOf(d: Dataset): RecordingSummary {
  return ((d.metadata as { recording?: RecordingSummary } | null)?.recording ?? {}) as RecordingSummary;
}

export function formatHours(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const hours = seconds / 3600;
  if (hours === 0) return '0 h';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (hours < 0.1) return `${Math.max(1, Math.round(seconds / 60))} min`;
  return `${hours < 10 ? hours.toFixed(1) : Math.round(hours)} h`;
}

/** The Zarr copy's state in words: `ready`, `ready, 2 failed`, `converting`... */
export function zarrState(d: Dataset): string {
  if (d.zarr_status === null) return 'not converted';
  const failed = zarrFailureCount(d);
  return d.zarr_status === 'ready' && failed ? `ready, ${failed} failed` : d.zarr_status;
}

function option(value: string, label: string, selected: string): SafeHtml {
  return html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;
}

/** The search form: it works as a plain GET form; the facet lists carry the counts of the current search. */
export function searchForm(q: HomeQuery, facets: Facets): SafeHtml {
  const modalities = facets.modality.map((f) => f.value);
  if (q.modality && !modalities.includes(q.modality)) modalities.push(q.modality);
  const rates = facets.sampling_rate.map((f) => f.value);
  if (q.sampling_rate && !rates.includes(q.sampling_rate)) rates.push(q.sampling_rate);
  const count = (list: Array<{ value: string; count: number }>, v: string) => list.find((f) => f.value === v)?.count;
  const label = (v: string, n: number | undefined, unit = '') => `${v}${unit}${n === undefined ? '' : ` (${n})`}`;
  return html`<form class="search" method="get" action="/" role="search">
<div class="search-main"><label class="grow">Search datasets<input type="search" name="q" value="${q.q}" placeholder="words, an author, “sleep”, “500 Hz”…" maxlength="500"></label><button type="submit">Search</button></div>
<details class="facets"${q.modality || q.task || q.sampling_rate || q.channels || q.min_subjects ? html` open` : ''}><summary>Filters</summary>
<div class="facet-grid">
<label>Modality<select name="modality">${option('', 'any', q.modality)}${modalities.map((m) => option(m, label(m, count(facets.modality, m)), q.modality))}</select></label>
<label>Task<input type="text" name="task" value="${q.task}" maxlength="60" placeholder="rest"></label>
<label>Sampling rate<select name="sampling_rate">${option('', 'any', q.sampling_rate)}${rates.map((r) => option(r, label(r, count(facets.sampling_rate, r), ' Hz'), q.sampling_rate))}</select></label>
<label>Channels<input type="number" name="channels" value="${q.channels}" min="1" max="100000" inputmode="numeric" placeholder="64"></label>
<label>Subjects at least<select name="min_subjects">${option('', 'any', q.min_subjects)}${facets.min_subjects.map((f) => option(f.value, label(f.value, f.count), q.min_subjects))}</select></label>
</div></details>
</form>`;
}

export function datasetCard(d: Dataset): SafeHtml {
  const rec = recordingOf(d);
  return html`<li class="dataset-card">
<h3><a href="/datasets/${d.id}">${d.name}</a></h3>
<p class="card-meta"><span class="mono">${d.id}</span> · ${d.owner_username}${d.visibility === 'private' ? html` · <span class="badge private">private</span>` : ''}${d.sandbox ? html` · <span class="badge">sandbox</span>` : ''}</p>
${d.description ? html`<p class="card-description">${d.description.length > 220 ? `${d.description.slice(0, 217)}…` : d.description}</p>` : ''}
<dl class="card-facts">
<div><dt>Modalities</dt><dd>${d.modalities.join(', ') || '–'}</dd></div>
<div><dt>Subjects</dt><dd>${d.n_subjects ?? '–'}</dd></div>
<div><dt>Recordings</dt><dd>${rec.n_recordings ?? '–'}</dd></div>
<div><dt>Signal</dt><dd>${formatHours(rec.duration_s)}</dd></div>
<div><dt>Zarr</dt><dd>${zarrState(d)}</dd></div>
${d.doi ? html`<div class="card-doi"><dt>DOI</dt><dd><a href="https://doi.org/${d.doi}">${d.doi}</a></dd></div>` : ''}
</dl>
</li>`;
}

/** `?q=...&page=n` of the same search. */
function pageHref(q: HomeQuery, page: number): string {
  const params = new URLSearchParams();
  for (const key of ['q', 'modality', 'task', 'sampling_rate', 'channels', 'min_subjects'] as const) if (q[key]) params.set(key, q[key]);
  if (page > 1) params.set('page', String(page));
  const text = params.toString();
  return text ? `/?${text}` : '/';
}

export function resultsSection(q: HomeQuery, datasets: Dataset[], total: number): SafeHtml {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const searching = q.q || q.modality || q.task || q.sampling_rate || q.channels || q.min_subjects;
  const heading = searching ? `${total} dataset${total === 1 ? '' : 's'} found` : `${total} dataset${total === 1 ? '' : 's'}`;
  const paging =
    pages > 1
      ? html`<nav class="paging" aria-label="Pages">
${q.page > 1 ? html`<a rel="prev" href="${pageHref(q, q.page - 1)}">← Previous</a>` : html`<span></span>`}
<span class="muted">Page ${q.page} of ${pages}</span>
${q.page < pages ? html`<a rel="next" href="${pageHref(q, q.page + 1)}">Next →</a>` : html`<span></span>`}
</nav>`
      : '';
  return html`<section aria-labelledby="results-heading">
<h2 id="results-heading">${heading}</h2>
${datasets.length
    ? html`<ul class="cards" id="results">${datasets.map(datasetCard)}</ul>`
    : total > 0
      ? html`<p class="muted" id="results">This page is past the last one: <a href="${pageHref(q, 1)}">back to the first page</a>.</p>`
      : html`<p class="muted" id="results">${searching ? 'No dataset matches. Try fewer words or filters.' : 'No public datasets yet.'}</p>`}
${paging}
</section>`;
}

/** The open requests an administrator decides, named on the home page. */
export interface AdminRequests {
  access: Array<{ username: string }>;
  publication: Array<{ id: number; dataset_id: string; version: string; requested_by_username: string | null }>;
}

/** An administrator's "Needs your action": the open requests, with the way to the page that decides them. */
export function adminRequestsSection(open: AdminRequests): SafeHtml | string {
  const { access, publication } = open;
  if (!access.length && !publication.length) return '';
  const names = (list: string[]) => (list.length > 5 ? `${list.slice(0, 5).join(', ')} and ${list.length - 5} more` : list.join(', '));
  return html`<section class="card" id="admin-requests" aria-labelledby="admin-requests-heading">
<h2 id="admin-requests-heading">Needs your action</h2>
<ul class="actions-needed">
${access.length ? html`<li>${access.length} request${access.length === 1 ? '' : 's'} for upload access: ${names(access.map((a) => a.username))}</li>` : ''}
${publication.length ? html`<li>${publication.length} publication request${publication.length === 1 ? '' : 's'}: ${names(publication.map((p) => `${p.dataset_id} v${p.version}${p.requested_by_username ? ` (${p.requested_by_username})` : ''}`))}</li>` : ''}
</ul>
<p><a href="/admin">Approve or deny them on the administration page</a></p>
</section>`;
}

/** What a dataset of the owner needs from them now, most urgent first; empty when nothing. */
export function neededActions(d: Dataset, admin = false): string[] {
  const out: string[] = [];
  const failed = zarrFailureCount(d);
  if (d.zarr_status === 'failed') out.push('The conversion failed: open the dataset to see why, fix the files and upload again.');
  if (failed) out.push(`${failed} recording${failed === 1 ? '' : 's'} could not be converted: the dataset page says why.`);
  if (d.latest_version === null) out.push(`Empty: upload a BIDS folder with npx nds datasets upload ${d.id} <folder>.`);
  else if (admin && d.publication_status === 'pending') out.push('Publication requested: as an administrator, approve or deny it on the administration page (/admin).');
  else if (d.visibility === 'private' && !d.sandbox && d.publication_status !== 'pending') {
    out.push(d.publication_status === 'denied' ? 'Publication was denied: see the reason, fix and request again.' : 'Private: request publication when it is ready to share.');
  }
  return out;
}

function stateOf(d: Dataset): string {
  const parts: string[] = [d.visibility];
  if (d.sandbox) parts.push('sandbox');
  if (d.publication_status) parts.push(`publication ${d.publication_status}`);
  parts.push(`Zarr ${zarrState(d)}`);
  return parts.join(' · ');
}

export function myDatasetsSection(datasets: Dataset[], more: boolean, admin = false): SafeHtml {
  const rows = datasets.map((d) => {
    const actions = neededActions(d, admin);
    return html`<tr>
<td><a href="/datasets/${d.id}">${d.name}</a><br><span class="mono muted">${d.id}</span></td>
<td>${stateOf(d)}</td>
<td>${actions.length ? html`<ul class="actions-needed">${actions.map((a) => html`<li>${a}</li>`)}</ul>` : html`<span class="muted">nothing</span>`}</td>
<td><a href="/datasets/${d.id}/settings">Settings</a></td>
</tr>`;
  });
  return html`<section class="card" id="my-datasets" aria-labelledby="mine-heading">
<h2 id="mine-heading">My datasets</h2>
${datasets.length
    ? html`<div class="table-scroll"><table class="mine"><thead><tr><th>Dataset</th><th>State</th><th>Needs your action</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>
${more ? html`<p class="muted">Only the newest ${datasets.length} are listed: <code>npx nds datasets list --mine</code> lists all.</p>` : ''}`
    : html`<p class="muted">You have no datasets yet. Create one with <code>npx nds datasets create "My study"</code>, then upload a BIDS folder with <code>npx nds datasets upload</code>.</p>`}
</section>`;
}
