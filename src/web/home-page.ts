/**
 * The home page at `/`: search over public datasets (and the signed-in person's own), with the facets of
 * `GET /datasets/search`, result cards and paging; for a signed-in person, their datasets and what needs
 * their action (for an administrator, the open requests too). A plain GET form: it works without JavaScript.
 */
import type { Context } from 'hono';
import { assertAccountUsable } from '../accounts/account-gates.js';
import type { User } from '../db/accounts-tables.js';
import { listDatasets } from '../datasets/list-datasets.js';
import { searchDatasets } from '../datasets/search.js';
import type { AppEnv } from '../http/app-env.js';
import { route, type Route } from '../http/route.js';
import { pendingUploadAccessRequests } from '../accounts/upload-access.js';
import { isAdmin } from '../datasets/dataset-access.js';
import { listPublicationRequests } from '../datasets/publication.js';
import { adminRequestsSection, myDatasetsSection, PAGE_SIZE, resultsSection, searchForm, type AdminRequests, type HomeQuery } from './dataset-cards.js';
import { html } from './html.js';
import { pageSession, renderPage } from './page-kit.js';

const MY_DATASETS = 20;
/** Past this page the search stops (its offset limit); nobody pages this far by hand. */
const MAX_PAGE = 1000;

/** The form's fields as typed, trimmed and bounded; the page number clamped to what exists. */
function readHomeQuery(raw: Record<string, string>): HomeQuery {
  const field = (name: string, max: number) => (raw[name] ?? '').trim().slice(0, max);
  const page = Number.parseInt(raw.page ?? '1', 10);
  return {
    q: field('q', 500),
    modality: field('modality', 40).toLowerCase(),
    task: field('task', 60),
    sampling_rate: field('sampling_rate', 20),
    channels: field('channels', 10),
    min_subjects: field('min_subjects', 10),
    page: Number.isSafeInteger(page) && page >= 1 ? Math.min(page, MAX_PAGE) : 1,
  };
}

/** A positive number from a field, or undefined (with the field named in `problems` when it is not one). */
function numberField(value: string, name: string, problems: string[], integer: boolean): number | undefined {
  if (value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1_000_000 || (integer && !Number.isInteger(n))) {
    problems.push(`${name} must be a ${integer ? 'whole ' : ''}number above 0; it was left out.`);
    return undefined;
  }
  return n;
}

/** The signed-in person whose account is usable; undefined for visitors (and accounts that cannot act now). */
async function signedIn(c: Context<AppEnv>): Promise<User | undefined> {
  const session = await pageSession(c);
  if (!session) return undefined;
  try {
    assertAccountUsable(session.user);
    return session.user;
  } catch {
    return undefined;
  }
}

async function homePage(c: Context<AppEnv>): Promise<Response> {
  const { deps } = c.var;
  const user = await signedIn(c);
  const q = readHomeQuery(c.req.query());
  const problems: string[] = [];
  const samplingRate = numberField(q.sampling_rate, 'Sampling rate', problems, false);
  const channels = numberField(q.channels, 'Channels', problems, true);
  const minSubjects = numberField(q.min_subjects, 'Subjects', problems, true);
  // Task and channel count are words of the index (`task rest`, `64ch`): they narrow the full-text query.
  const words = [q.q, q.task, channels !== undefined ? `${channels} channels` : ''].filter(Boolean).join(' ');
  const found = await searchDatasets(deps, user, {
    q: words,
    mode: 'fulltext',
    modality: q.modality || undefined,
    samplingRate,
    minSubjects,
    limit: PAGE_SIZE,
    offset: (q.page - 1) * PAGE_SIZE,
  });
  const mine = user ? await listDatasets(deps.db, user, { scope: 'owned', limit: MY_DATASETS }) : undefined;
  const admin = isAdmin(user);
  const open: AdminRequests | undefined = admin
    ? { access: await pendingUploadAccessRequests(deps.db), publication: (await listPublicationRequests(deps, 'pending', 500, { withFailures: false })).reverse() }
    : undefined;
  const body = html`<h1 class="visually-hidden">nds datasets</h1>
${user ? '' : html`<p class="lead">Open EEG, EMG and iEEG datasets in BIDS, each recording streamable in the browser. <a href="/login">Sign in</a> to see and manage your own.</p>`}
${problems.map((p) => html`<p class="notice error" role="alert">${p}</p>`)}
${open ? adminRequestsSection(open) : ''}
${mine ? myDatasetsSection(mine.datasets, mine.nextCursor !== null, admin) : ''}
${searchForm(q, found.facets)}
${resultsSection(q, found.hits.map((h) => h.dataset), found.total)}`;
  return renderPage(c, 'Datasets', body, user?.username);
}

export const homePages: Route[] = [
  route({
    method: 'get',
    path: '/',
    summary: 'The home page: dataset search, result cards, and the signed-in person\'s own datasets',
    access: 'page',
    undocumented: true,
    handler: (c) => homePage(c),
  }),
];
