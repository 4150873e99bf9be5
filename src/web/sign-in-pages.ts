/**
 * `/login` and `/signup`: forms that post to the browser sign-in routes (`/auth/code/*`, `/auth/password/login`),
 * which answer a form with a redirect back here, carrying the step, what was typed and any error code.
 */
import { route, type Route } from '../http/route.js';
import { localNext } from '../http/form-input.js';
import { html } from './html.js';
import { errorNotice, okNotice, pageSession, renderPage } from './page-kit.js';

function nextField(next: string | undefined) {
  return next ? html`<input type="hidden" name="next" value="${localNext(next)}">` : '';
}

function codeRequestForm(email: string | undefined, next: string | undefined, button: string) {
  return html`<form class="stack" method="post" action="/auth/code/request">
<label>Email address<input type="email" name="email" value="${email ?? ''}" autocomplete="email" required></label>
${nextField(next)}<button type="submit">${button}</button>
</form>`;
}

function codeStep(email: string, next: string | undefined) {
  return html`<section class="card">
<h2>Enter the code</h2>
<p>If <strong>${email}</strong> can sign in, we mailed it a 6-digit code. It works for 10 minutes.</p>
<form class="stack" method="post" action="/auth/code/verify">
<input type="hidden" name="email" value="${email}">
<label>Code<input class="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="20" required autofocus></label>
${nextField(next)}<button type="submit">Sign in</button>
</form>
</section>
<section class="card">
<p class="muted">No mail? Check the address, or send a new code.</p>
<form class="inline" method="post" action="/auth/code/request"><input type="hidden" name="email" value="${email}">${nextField(next)}<button class="secondary" type="submit">Send a new code</button></form>
</section>`;
}

function verifyStep(email: string, next: string | undefined) {
  return html`<section class="card">
<h2>Verify your address to continue</h2>
<p>Your account's address <strong>${email}</strong> is not verified yet. We will mail it a code; type it on the next page.</p>
<form class="inline" method="post" action="/auth/code/request"><input type="hidden" name="email" value="${email}">${nextField(next)}<button type="submit">Mail me a code</button></form>
</section>`;
}

function chooseStep(q: Record<string, string | undefined>) {
  return html`<section class="card">
<h2>Sign in with a code by email</h2>
${codeRequestForm(q.email, q.next, 'Mail me a code')}
</section>
<section class="card">
<h2>Sign in with a password</h2>
<form class="stack" method="post" action="/auth/password/login">
<label>Username or email<input type="text" name="login" value="${q.login ?? ''}" autocomplete="username" required></label>
<label>Password<input type="password" name="password" autocomplete="current-password" required></label>
${nextField(q.next)}<button type="submit">Sign in</button>
</form>
</section>
<p class="muted">New here? <a href="/signup${q.next ? `?next=${encodeURIComponent(localNext(q.next))}` : ''}">Create an account</a>.</p>`;
}

export const signInPages: Route[] = [
  route({
    method: 'get',
    path: '/login',
    summary: 'The sign-in page: a mailed code or a password',
    access: 'page',
    undocumented: true,
    handler: async (c) => {
    const q = c.req.query();
    const session = await pageSession(c);
    const username = session?.user.username;
    const notice = [errorNotice(q.error), okNotice(q.signed_out ? 'You are signed out.' : undefined)];
    let step;
    if (q.step === 'code' && q.email) step = codeStep(q.email, q.next);
    else if (q.step === 'verify' && q.email) step = verifyStep(q.email, q.next);
    else if (session && session.user.status !== 'pending' && !q.error) {
      step = html`<section class="card"><p>You are signed in as <strong>${session.user.username}</strong>.</p>
<p><a href="${localNext(q.next)}">Continue</a></p></section>`;
    } else step = chooseStep(q);
    return renderPage(c, 'Sign in', html`<h1>Sign in to nds</h1>${notice}${step}`, username);
    },
  }),

  route({
    method: 'get',
    path: '/signup',
    summary: 'The sign-up page',
    access: 'page',
    undocumented: true,
    handler: async (c) => {
    const q = c.req.query();
    const session = await pageSession(c);
    const body = html`<h1>Create an nds account</h1>
${errorNotice(q.error)}
${q.error === 'username_taken' ? html`<p class="muted">If that name is your account's, <a href="/login${q.email ? `?email=${encodeURIComponent(q.email)}` : ''}">sign in</a> instead: a new account needs a name no account holds.</p>` : ''}
<section class="card">
<p>Choose a username and give your email address. We mail you a code to verify it; no password needed.
Afterwards, <code>npx nds auth login</code> signs your terminal in through this browser.</p>
<form class="stack" method="post" action="/auth/code/request">
<input type="hidden" name="from" value="signup">
<label>Username<input type="text" name="username" value="${q.username ?? ''}" pattern="[a-z0-9][a-z0-9\\-]{2,38}" title="3 to 39 lower-case letters, digits and hyphens" autocomplete="username" required></label>
<label>Email address<input type="email" name="email" value="${q.email ?? ''}" autocomplete="email" required></label>
${nextField(q.next)}<button type="submit">Create account</button>
</form>
</section>
<p class="muted">Already have an account? <a href="/login">Sign in</a>.</p>`;
    return renderPage(c, 'Create an account', body, session?.user.username);
    },
  }),
];
