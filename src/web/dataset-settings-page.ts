/**
 * A dataset's settings page (`/datasets/:id/settings`), for its owner, maintainers and admins: its metadata,
 * its members, its publication (request, status, the last decision), and for admins its visibility (a takedown,
 * with a reason mailed to the owner). Plain forms that post back here and answer with a redirect (or the form
 * again, with what was typed and what is wrong): it works without JavaScript. The services are those of the HTTP
 * routes (PATCH, publish request).
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { assertAccountUsable } from '../accounts/account-gates.js';
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { isAdmin } from '../datasets/dataset-access.js';
import type { Dataset } from '../datasets/dataset-queries.js';
import { publicationState, requestPublication, type PublicationRequestView } from '../datasets/publication.js';
import { updateDataset } from '../datasets/update-dataset.js';
import { datasetMembers, MEMBER_ROLES, removeMember, setMember, type PresentedMember } from '../datasets/dataset-members.js';
import type { MemberRole } from '../db/datasets-tables.js';
import { membersSection } from './dataset-members-section.js';
import type { AppEnv } from '../http/app-env.js';
import { clientIp } from '../http/client-ip.js';
import { CONTROL_CHARACTER_PROBLEM, isCleanLine, isCleanParagraph } from '../core/text-controls.js';
import { FormFields, type FormInput } from '../http/form-input.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { html, type SafeHtml } from './html.js';
import { errorSentence, okNotice, pageSession, renderPage, requireOwnOrigin, signInFirst, verifyFirst } from './page-kit.js';

/** What the metadata form holds, as typed. */
interface MetadataForm {
  name: string;
  description: string;
  license: string;
  keywords: string;
  authors: string;
}

const splitList = (text: string, separator: RegExp) => text.split(separator).map((s) => s.trim()).filter(Boolean);

/** The limits of the API's PATCH (routes/dataset-schemas.ts), for the form's fields. */
const MetadataPatch = z.object({
  name: z.string().trim().min(1, 'Name: give the dataset a name.').max(200, 'Name: at most 200 characters.').refine(isCleanLine, `Name ${CONTROL_CHARACTER_PROBLEM}.`),
  description: z.string().trim().max(20_000, 'Description: at most 20,000 characters.').refine(isCleanParagraph, `Description ${CONTROL_CHARACTER_PROBLEM}.`),
  license: z.string().trim().max(100, 'License: at most 100 characters.').refine(isCleanLine, `License ${CONTROL_CHARACTER_PROBLEM}.`),
  keywords: z.array(z.string().max(100, 'Keywords: each at most 100 characters.').refine(isCleanLine, `A keyword ${CONTROL_CHARACTER_PROBLEM}.`)).max(50, 'Keywords: at most 50.'),
  authors: z.array(z.string().max(300, 'Authors: each at most 300 characters.').refine(isCleanLine, `An author ${CONTROL_CHARACTER_PROBLEM}.`)).max(500, 'Authors: at most 500.'),
});

/** The limits of the API's `visibility_reason` (routes/dataset-schemas.ts), for the takedown form's reason. */
const TakedownReason = z
  .string()
  .trim()
  .max(2000, 'Reason: at most 2,000 characters.')
  .refine(isCleanParagraph, `The reason ${CONTROL_CHARACTER_PROBLEM}.`);

function formOf(d: Dataset): MetadataForm {
  return { name: d.name, description: d.description, license: d.license ?? '', keywords: d.keywords.join(', '), authors: d.authors.join('\n') };
}

interface SettingsView {
  dataset: Dataset;
  user: User;
  requests: PublicationRequestView[];
  members: PresentedMember[];
  form?: MetadataForm;
  /** The takedown reason as typed, shown again when the takedown was refused. */
  reason?: string;
  notices?: Array<SafeHtml | string>;
}

function errorBlock(message: string, details: string[] = []): SafeHtml {
  return html`<div class="notice error" role="alert"><p class="flush">${message}</p>${details.length ? html`<ul>${details.map((d) => html`<li>${d}</li>`)}</ul>` : ''}</div>`;
}

function settingsBody(view: SettingsView): SafeHtml {
  const { dataset: d, user } = view;
  const f = view.form ?? formOf(d);
  const latest = view.requests[0];
  const publication = d.sandbox
    ? html`<p class="muted">A sandbox dataset is for practice and is never published.</p>`
    : d.publication_status === 'pending'
      ? html`<p>Publication of version <strong>${latest?.version ?? d.latest_version ?? ''}</strong> was requested${latest ? ` on ${new Date(latest.requested_at).toISOString().slice(0, 10)}` : ''}: an administrator will approve it (the dataset then becomes public with a DOI) or say what to change.</p>`
      : html`${d.publication_status === 'denied' && latest?.reason ? html`<p class="notice error">The last request was denied: ${latest.reason}</p>` : ''}
${d.doi ? html`<p>Published as <a href="https://doi.org/${d.doi}">${d.doi}</a>. A new request publishes the latest version (${d.latest_version ?? 'none'}).</p>` : html`<p>Publishing makes the dataset public and gives it a DOI, after an administrator's approval. It needs a name, a description, authors and a license.</p>`}
<form class="stack wide" method="post" action="/datasets/${d.id}/settings/publish">
<label>Message to the administrators (optional)<textarea name="message" maxlength="2000"></textarea></label>
<button type="submit"${d.latest_version ? '' : html` disabled`}>Request publication${d.latest_version ? ` of ${d.latest_version}` : ''}</button>
${d.latest_version ? '' : html`<p class="muted">Upload a version first: <code>npx nds datasets upload ${d.id} &lt;folder&gt;</code>.</p>`}
</form>`;
  const visibility = isAdmin(user)
    ? d.visibility === 'public'
      ? html`<p>This dataset is <strong>public</strong>. Making it private hides it, its page and its signals from everyone but its owner and administrators, at once.</p>
<form class="stack wide" method="post" action="/datasets/${d.id}/settings/visibility"><input type="hidden" name="visibility" value="private">
<label>Reason, mailed to the owner (optional)<textarea name="reason" maxlength="2000" rows="3">${view.reason ?? ''}</textarea></label>
<button class="danger" type="submit">Make private</button></form>`
      : html`<p>This dataset is <strong>private</strong>. It becomes public only through an approved publication request (<code>npx nds admin publish approve</code>).</p>`
    : html`<p>This dataset is <strong>${d.visibility}</strong>.${d.visibility === 'private' ? ' Only you and administrators see it; it becomes public when a publication request is approved.' : ''}</p>`;
  return html`<h1>Settings <span class="muted">· <a href="/datasets/${d.id}">${d.name}</a> <span class="mono">${d.id}</span></span></h1>
${view.notices ?? ''}
<section class="card" id="metadata"><h2>Metadata</h2>
<form class="stack wide" method="post" action="/datasets/${d.id}/settings">
<label>Name<input type="text" name="name" value="${f.name}" maxlength="200" required></label>
<label>Description<textarea name="description" maxlength="20000" rows="5">${f.description}</textarea></label>
<label>Authors, one a line<textarea name="authors" rows="3">${f.authors}</textarea></label>
<label>License<input type="text" name="license" value="${f.license}" maxlength="100" placeholder="CC0-1.0"></label>
<label>Keywords, separated by commas<input type="text" name="keywords" value="${f.keywords}" placeholder="sleep, EEG, polysomnography"></label>
<button type="submit">Save metadata</button>
</form></section>
${membersSection(d.id, d.owner_username, view.members, user.username)}
<section class="card" id="publication"><h2>Publication</h2>${publication}</section>
<section class="card" id="visibility"><h2>Visibility</h2>${visibility}</section>`;
}

/** A dataset as its settings page shows it, to the account managing it. */
type Managed = Omit<SettingsView, 'form' | 'notices'>;

/** The usable account of this browser and the dataset it may manage; or the answer instead (sign in, 404, 403). */
async function managed(c: Context<AppEnv>, id: string): Promise<Managed | Response> {
  const here = `/datasets/${id}/settings`;
  const session = await pageSession(c);
  if (!session) return c.redirect(signInFirst(here), 303);
  if (session.user.status === 'pending') return c.redirect(verifyFirst(session.user, here), 303);
  const user = session.user;
  try {
    assertAccountUsable(user);
    const { dataset, requests } = await publicationState(c.var.deps, user, id);
    const { members } = await datasetMembers(c.var.deps, user, id);
    return { user, dataset, requests, members };
  } catch (err) {
    if (!(err instanceof NdsError)) throw err;
    const status = err.status === 403 ? 403 : 404;
    const body = html`<h1>${status === 404 ? 'Not found' : 'Not yours'}</h1><p>${status === 404 ? `No dataset ${id}.` : err.message}</p><p><a href="/">Home</a></p>`;
    return renderPage(c, 'Settings', body, user.username, status);
  }
}

function failure(err: unknown): SafeHtml {
  if (!(err instanceof NdsError)) throw err;
  return errorBlock(err.message || errorSentence(err.code) || err.code, err.details ?? []);
}

/** The settings page for `view` (its notices say what was done or why it was refused). */
function settingsPage(c: Context<AppEnv>, view: SettingsView, status: ContentfulStatusCode = 200): Response {
  return renderPage(c, `Settings of ${view.dataset.name}`, settingsBody(view), view.user.username, status);
}

const settingsPath = `${DATASET_PATH}/settings`;

/**
 * A form of the settings page, posted to `path`: what every one of them checks first, in one place. It comes
 * from this site (`requireOwnOrigin`), from the usable account of this browser, for a dataset that account may
 * manage (`managed`: else the sign-in redirect, or the 404 or 403 page); `handle` then gets that dataset and
 * the form's fields.
 */
function settingsForm(spec: {
  path: string;
  summary: string;
  /** Largest body taken; absent: the routes' default. */
  maxBytes?: number;
  handle: (c: Context<AppEnv>, found: Managed, form: FormInput | undefined) => Promise<Response>;
}): Route {
  return route({
    method: 'post',
    path: spec.path,
    summary: spec.summary,
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form'], optional: true, ...(spec.maxBytes !== undefined && { maxBytes: spec.maxBytes }) },
    handler: async (c, { body }) => {
      requireOwnOrigin(c);
      const found = await managed(c, c.req.param('id')!);
      if (found instanceof Response) return found;
      return spec.handle(c, found, body);
    },
  });
}

export const datasetSettingsPages: Route[] = [
  route({
    method: 'get',
    path: settingsPath,
    summary: "A dataset's settings page: metadata, publication, visibility",
    access: 'page',
    undocumented: true,
    handler: async (c) => {
      const found = await managed(c, c.req.param('id')!);
      if (found instanceof Response) return found;
      const q = c.req.query();
      const notices = [
        okNotice(q.saved ? 'The metadata is saved.' : undefined),
        okNotice(q.requested ? 'Publication is requested: an administrator will decide.' : undefined),
        okNotice(q.private ? 'The dataset is private now.' : undefined),
        okNotice(q.member ? `${q.member} is a member now, as ${q.role ?? 'reader'}.` : undefined),
        okNotice(q.removed ? `${q.removed} is no longer a member.` : undefined),
      ];
      return settingsPage(c, { ...found, notices });
    },
  }),

  settingsForm({
    path: settingsPath,
    summary: "The settings page's metadata form",
    maxBytes: 128 * 1024,
    handle: async (c, found, body) => {
      const form: MetadataForm = { name: body?.name ?? '', description: body?.description ?? '', license: body?.license ?? '', keywords: body?.keywords ?? '', authors: body?.authors ?? '' };
      const parsed = MetadataPatch.safeParse({ ...form, keywords: splitList(form.keywords, /,/), authors: splitList(form.authors, /\r?\n/) });
      if (!parsed.success) {
        const notices = [errorBlock('Nothing was saved:', parsed.error.issues.map((i) => i.message))];
        return settingsPage(c, { ...found, form, notices }, 400);
      }
      const p = parsed.data;
      try {
        await updateDataset(c.var.deps, { user: found.user, ip: clientIp(c) }, found.dataset.id, { name: p.name, description: p.description, license: p.license || null, keywords: p.keywords, authors: p.authors });
      } catch (err) {
        return settingsPage(c, { ...found, form, notices: [failure(err)] }, 400);
      }
      return c.redirect(`/datasets/${found.dataset.id}/settings?saved=1`, 303);
    },
  }),

  settingsForm({
    path: `${settingsPath}/publish`,
    summary: "The settings page's publication request",
    handle: async (c, found, body) => {
      try {
        await requestPublication(c.var.deps, { user: found.user, ip: clientIp(c) }, found.dataset.id, body?.message?.trim().slice(0, 2000) || undefined);
      } catch (err) {
        return settingsPage(c, { ...found, notices: [failure(err)] }, 409);
      }
      return c.redirect(`/datasets/${found.dataset.id}/settings?requested=1#publication`, 303);
    },
  }),

  settingsForm({
    path: `${settingsPath}/visibility`,
    summary: "The settings page's visibility form (admins: public → private)",
    handle: async (c, found, body) => {
      const typed = body?.reason ?? '';
      // A browser sends a textarea's line breaks as CRLF; the mail quotes the reason line by line.
      const reason = TakedownReason.safeParse(typed.replace(/\r\n/g, '\n'));
      if (!reason.success) {
        const notices = [errorBlock('The dataset was not made private:', reason.error.issues.map((i) => i.message))];
        return settingsPage(c, { ...found, reason: typed, notices }, 400);
      }
      try {
        if (body?.visibility !== 'private') throw new NdsError('validation_failed', { message: 'Only "private" can be chosen here; a dataset becomes public through publication.' });
        await updateDataset(c.var.deps, { user: found.user, ip: clientIp(c) }, found.dataset.id, { visibility: 'private', ...(reason.data && { visibility_reason: reason.data }) });
      } catch (err) {
        // failure() rethrows anything but an NdsError, so the status below reads an NdsError's.
        const notice = failure(err);
        return settingsPage(c, { ...found, reason: typed, notices: [notice] }, (err as NdsError).status === 403 ? 403 : 400);
      }
      return c.redirect(`/datasets/${found.dataset.id}/settings?private=1#visibility`, 303);
    },
  }),

  settingsForm({
    path: `${settingsPath}/members`,
    summary: "The settings page's member form: add a member or change their role",
    handle: async (c, found, body) => {
      const username = body?.username?.trim() ?? '';
      const role = body?.role ?? 'reader';
      try {
        if (!username) throw new NdsError('validation_failed', { message: 'Give the username of the person to add.' });
        if (!MEMBER_ROLES.includes(role as MemberRole)) throw new NdsError('validation_failed', { message: `A role is one of ${MEMBER_ROLES.join(', ')}.` });
        await setMember(c.var.deps, { user: found.user, ip: clientIp(c) }, found.dataset.id, username, role as MemberRole);
      } catch (err) {
        const notice = failure(err);
        return settingsPage(c, { ...found, notices: [notice] }, (err as NdsError).status === 403 ? 403 : 400);
      }
      return c.redirect(`/datasets/${found.dataset.id}/settings?member=${encodeURIComponent(username)}&role=${role}#members`, 303);
    },
  }),

  settingsForm({
    path: `${settingsPath}/members/remove`,
    summary: "The settings page's remove (or leave) button of a member",
    handle: async (c, found, body) => {
      const username = body?.username?.trim() ?? '';
      try {
        await removeMember(c.var.deps, { user: found.user, ip: clientIp(c) }, found.dataset.id, username);
      } catch (err) {
        return settingsPage(c, { ...found, notices: [failure(err)] }, 400);
      }
      // Leaving ends one's own view of a private dataset: back home.
      if (username === found.user.username) return c.redirect('/', 303);
      return c.redirect(`/datasets/${found.dataset.id}/settings?removed=${encodeURIComponent(username)}#members`, 303);
    },
  }),
];
