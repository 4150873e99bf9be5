/** The first-run page: the form that makes the service's owner from the one-time setup link. */
import { html, type SafeHtml } from './html.js';

export interface SetupFormValues {
  token: string;
  username?: string;
  email?: string;
}

export function setupFormBody(values: SetupFormValues, notice: SafeHtml | string = ''): SafeHtml {
  return html`<h1>Set up nds</h1>
${notice}
<section class="card">
<p>This service has no owner yet. The owner approves accounts, publishes datasets and manages the service.
Choose your username and give your email address; you are signed in on this browser at once.</p>
<form class="stack" method="post" action="/setup">
<input type="hidden" name="token" value="${values.token}">
<label>Username<input type="text" name="username" value="${values.username ?? ''}" pattern="[a-z0-9][a-z0-9\\-]{2,38}" title="3 to 39 lower-case letters, digits and hyphens" autocomplete="username" required></label>
<label>Email address<input type="email" name="email" value="${values.email ?? ''}" autocomplete="email" required></label>
<button type="submit">Create the owner account</button>
</form>
</section>
<p class="muted">The link works once and for an hour. Without it, <code>npx nds admin bootstrap --username you --email you@example.org</code> in a terminal on this machine makes the owner too.</p>`;
}

export function setupRefusedBody(sentence: string): SafeHtml {
  return html`<h1>Set up nds</h1>
<p class="notice error" role="alert">${sentence}</p>
<p><a href="/login">Sign in</a> · <a href="/">Home</a></p>`;
}

export function setupDoneBody(username: string, publicUrl: string): SafeHtml {
  return html`<h1>Welcome, ${username}</h1>
<p class="notice ok" role="status">You are the owner of this nds service, and signed in on this browser.</p>
<section class="card">
<h2>Next</h2>
<ol>
<li>Sign your terminal in (once: it remembers this server): <code>${publicUrl === 'http://localhost:8080' ? '' : `NDS_API_URL=${publicUrl} `}npx nds auth login</code></li>
<li>Create a dataset: <code>npx nds datasets create "My EEG study"</code></li>
<li>Upload a BIDS folder and watch it convert: <code>npx nds datasets upload nd000001 ./my-study --wait</code></li>
</ol>
<p class="muted"><code>npx nds</code> runs the command from the folder where nds is installed (the repository).
For a plain <code>nds</code> everywhere, run <code>npm link</code> in that folder (or <code>npm install --global</code> of it).</p>
<p><a href="/account">Your account</a> · <a href="/admin">Administration</a> · <a href="/datasets">Datasets</a></p>
</section>`;
}
