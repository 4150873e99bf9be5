/**
 * Device sign-in driven by a standards-following OAuth 2.0 client library (oauth4webapi), as a third-party
 * tool would: form-encoded requests with a `client_id`, and a token answer read as RFC 6749 §5.1 says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { createAccount, createBrowserSession } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** The client id documented in docs/standards-clients.md. */
const CLIENT_ID = 'nds';

describe('device sign-in with an OAuth 2.0 client library (oauth4webapi)', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  const client: oauth.Client = { client_id: CLIENT_ID };
  const options = { [oauth.allowInsecureRequests]: true };
  before(async () => {
    server = await startTestServer();
    as = {
      issuer: server.url,
      device_authorization_endpoint: `${server.url}/auth/device/start`,
      token_endpoint: `${server.url}/auth/device/token`,
    };
  });
  after(() => server.close());

  it('start takes a form body with client_id, scope and machine_name', async () => {
    const res = await fetch(`${server.url}/auth/device/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, scope: 'datasets', machine_name: 'form-pc' }),
    });
    assert.equal(res.status, 200);
    const started = await res.json();
    assert.match(started.user_code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const alice = await createAccount(server);
    const browser = await createBrowserSession(server, alice.user);
    const look = await browser.fetch(`/auth/device/lookup?code=${started.user_code}`);
    assert.equal((await look.json()).machine_name, 'form-pc');
  });

  it('completes the flow: authorization_pending, approval in the browser, then a Bearer access token', async () => {
    const alice = await createAccount(server, { status: 'verified' });
    const browser = await createBrowserSession(server, alice.user);

    const startRes = await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'datasets', machine_name: 'oauth-tool' }, options);
    const started = await oauth.processDeviceAuthorizationResponse(as, client, startRes);
    assert.equal(started.verification_uri, `${server.url}/device`);
    assert.equal(started.interval, 5);

    // Not yet approved: the library surfaces the RFC 8628 error as it is.
    server.clock.advance(5_001);
    await assert.rejects(
      oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, options)),
      (err: unknown) => err instanceof oauth.ResponseBodyError && err.error === 'authorization_pending',
    );

    const look = await browser.fetch(`/auth/device/lookup?code=${started.user_code}`);
    assert.equal((await look.json()).machine_name, 'oauth-tool');
    const confirmed = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: started.user_code }) });
    assert.equal(confirmed.status, 200);

    server.clock.advance(5_001);
    const tokenRes = await oauth.deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, options);
    const token = await oauth.processDeviceCodeResponse(as, client, tokenRes);
    assert.equal(token.token_type, 'bearer'); // the library lower-cases it
    assert.match(token.access_token, /^nds_/);
    // nds's own fields stay beside the standard ones.
    assert.equal(token.api_key, token.access_token);
    assert.equal((token.user as { username: string }).username, alice.user.username);

    const me = await oauth.protectedResourceRequest(token.access_token, 'GET', new URL(`${server.url}/users/me`), undefined, undefined, options);
    assert.equal(me.status, 200);
    assert.equal((await me.json()).username, alice.user.username);

    // A second collection is refused, as an OAuth error the library reads.
    server.clock.advance(5_001);
    await assert.rejects(
      oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, options)),
      (err: unknown) => err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant',
    );
  });

  it('RFC 8414 discovery names the endpoints the library needs', async () => {
    const discovered = await oauth.processDiscoveryResponse(new URL(server.url), await oauth.discoveryRequest(new URL(server.url), { algorithm: 'oauth2', ...options }));
    assert.equal(discovered.issuer, server.url);
    assert.equal(discovered.device_authorization_endpoint, as.device_authorization_endpoint);
    assert.equal(discovered.token_endpoint, as.token_endpoint);
    assert.deepEqual(discovered.grant_types_supported, ['urn:ietf:params:oauth:grant-type:device_code']);
    assert.deepEqual(discovered.token_endpoint_auth_methods_supported, ['none']);
    // The discovered metadata drives a flow as far as the pending answer.
    const started = await oauth.processDeviceAuthorizationResponse(discovered, client, await oauth.deviceAuthorizationRequest(discovered, client, oauth.None(), {}, options));
    server.clock.advance(5_001);
    await assert.rejects(
      oauth.processDeviceCodeResponse(discovered, client, await oauth.deviceCodeGrantRequest(discovered, client, oauth.None(), started.device_code, options)),
      (err: unknown) => err instanceof oauth.ResponseBodyError && err.error === 'authorization_pending',
    );
  });

  it('a denied code reaches the library as access_denied', async () => {
    const bob = await createAccount(server);
    const browser = await createBrowserSession(server, bob.user);
    const started = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), {}, options));
    assert.equal((await browser.fetch('/auth/device/deny', { method: 'POST', body: JSON.stringify({ code: started.user_code }) })).status, 200);
    server.clock.advance(5_001);
    await assert.rejects(
      oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, options)),
      (err: unknown) => err instanceof oauth.ResponseBodyError && err.error === 'access_denied',
    );
  });
});
