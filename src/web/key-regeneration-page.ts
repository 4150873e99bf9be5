/**
 * The pages of a mailed key-regeneration link (legacy). Opening the link only shows a button: mail scanners
 * open links too, and must not use up the one-time link. The button's post shows the new key, once.
 */
import { errorSentence } from './page-kit.js';
import { html, page } from './html.js';

export function confirmKeyRegenerationPage(token: string, live: boolean): string {
  const body = live
    ? html`<h1>Get a new API key</h1>
<section class="card"><p>This link makes a new API key for your account and revokes the key you got earlier by
email and password or by such a link. Keys from <code>npx nds auth login</code> stay valid.</p>
<form method="post" action="/auth/confirm-key-regeneration"><input type="hidden" name="token" value="${token}"><button type="submit">Show my new key</button></form>
<p class="muted">Better: run <code>npx nds auth login</code>, which needs no mail and no password.</p></section>`
    : html`<h1>Get a new API key</h1><p class="notice error" role="alert">${errorSentence('link_invalid')}</p>`;
  return page({ title: 'New API key', body });
}

export function newKeyPage(apiKey: string, username: string): string {
  return page({
    title: 'New API key',
    body: html`<h1>Your new API key</h1>
<section class="card"><p>For <strong>${username}</strong>. Copy it now: it is shown only this once.</p><code class="secret" id="new-key">${apiKey}</code></section>`,
  });
}

export function keyRegenerationErrorPage(code: string): string {
  return page({ title: 'New API key', body: html`<h1>Get a new API key</h1><p class="notice error" role="alert">${errorSentence(code) ?? code}</p>` });
}
