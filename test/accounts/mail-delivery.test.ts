/**
 * The mailing routes answer alike, in time too: what they mail only for some addresses (a code, a link, a notice)
 * is delivered after the answer, so a slow relay, or one that is down, shows in no answer (docs/security.md,
 * decisions 0055 and 0061). The relay below holds every message until the test lets it accept them: an answer
 * that arrives while the relay holds its mail did not wait for the relay, however loaded the machine is.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../support/accounts.js';
import { createUploader } from '../datasets/support.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface HeldRelay {
  server: Server;
  port: number;
  /** Messages the relay has accepted. */
  messages: () => number;
  /** Accepts the messages held, and every later one at once. */
  open: () => void;
  /** Holds every later message again, until `open()`. */
  hold: () => void;
}

/** A minimal SMTP relay that accepts no message until `open()` is called (a relay slow to accept, as slow as a test likes). */
async function heldRelay(): Promise<HeldRelay> {
  let messages = 0;
  let opened = false;
  const held: Socket[] = [];
  const accept = (socket: Socket) => {
    messages++;
    socket.write('250 2.0.0 queued\r\n');
  };
  const server = createServer((socket) => {
    let inData = false;
    let buffer = '';
    socket.write('220 relay.test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          if (opened) accept(socket);
          else held.push(socket);
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 relay.test\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
          return;
        } else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as { port: number }).port,
    messages: () => messages,
    open: () => {
      opened = true;
      for (const socket of held.splice(0)) accept(socket);
    },
    hold: () => {
      opened = false;
    },
  };
}

/** A port nothing listens on (a relay that is down): one that was listened on a moment ago. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The three routes that mail only some addresses, each with an account of the kind it mails (or, for the code, the kind it does not). */
const cases = [
  { path: '/auth/request-key-regeneration', status: 'verified' as const, mails: 'the account' },
  { path: '/auth/resend-verification', status: 'pending' as const, mails: 'the account' },
  { path: '/auth/code/request', status: 'revoked' as const, mails: 'the unknown address' },
];

function suite(name: string, relayUp: boolean) {
  describe(name, () => {
    let relay: HeldRelay | undefined;
    let server: TestServer;
    let n = 0;
    before(async () => {
      relay = relayUp ? await heldRelay() : undefined;
      const port = relay?.port ?? (await closedPort());
      server = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
    });
    after(async () => {
      relay?.open();
      await server.close();
      relay?.server.close();
    });

    /** One JSON post in a fresh rate-limit window: its status and body, or a failure if it waits for the relay. */
    async function answer(path: string, body: Record<string, string>) {
      server.clock.advance(16 * 60_000);
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: server.url },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      }).catch((err: unknown) => assert.fail(`${path} waited for the relay to accept a mail (${err})`));
      return { status: res.status, text: await res.text() };
    }

    for (const c of cases) {
      it(`${c.path}: a ${c.status} account's address and an unknown one answer 200 alike, without waiting for the relay`, async () => {
        const account = await createAccount(server, { status: c.status });
        relay?.hold();
        const mailsBefore = relay?.messages() ?? 0;
        const known = await answer(c.path, { email: account.user.email });
        const unknown = await answer(c.path, { email: `nobody-${process.pid}-${++n}@example.org` });
        assert.deepEqual(known, { status: 200, text: unknown.text });
        if (relay) {
          // The one mail of the two still goes out, after the answers, once the relay takes it.
          assert.equal(relay.messages(), mailsBefore, 'the relay holds every mail until it is opened');
          relay.open();
          await server.deps.mailer.delivered();
          assert.equal(relay.messages() - mailsBefore, 1, `${c.mails} is mailed`);
        }
      });
    }

    if (relayUp) {
      // Whether the mail limits let a member's mail go must not show in the answer's time either.
      it('PUT /datasets/:id/members/:username answers without waiting for the relay; the member is mailed after', async () => {
        const owner = await createUploader(server);
        const person = await createAccount(server);
        const made = await owner.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Held mail' }) });
        const { id } = (await made.json()) as { id: string };
        relay!.hold();
        const mailsBefore = relay!.messages();
        const added = await owner.api(`/datasets/${id}/members/${person.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'reader' }), signal: AbortSignal.timeout(10_000) })
          .catch((err: unknown) => assert.fail(`adding a member waited for the relay to accept its mail (${err})`));
        assert.equal(added.status, 201);
        assert.equal(relay!.messages(), mailsBefore, 'the relay holds the mail until it is opened');
        relay!.open();
        await server.deps.mailer.delivered();
        assert.equal(relay!.messages() - mailsBefore, 1, 'the new member is mailed');
      });
    }
  });
}

suite('mailing routes with a relay that holds every mail', true);
suite('mailing routes with the relay down', false);
