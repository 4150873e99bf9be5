/**
 * The CLI's file transfers against real local HTTP servers that misbehave the ways a store or a network can:
 * an early refusal, a connection cut half-way, a file that shrinks while it is sent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closeAgents, putBytes, putFile, TransferError } from '../../src/cli/http-transfer.js';

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }));
  });
}

/** A server that answers `{}` to any body, and what it received: the bytes counted and their SHA-256. */
async function receivingServer(servers: Server[]): Promise<{ url: string; received: () => { bytes: number; sha256: string } }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const { server, url } = await listen((req, res) => {
    req.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
    });
    req.on('end', () => res.end('{}'));
  });
  servers.push(server);
  return { url, received: () => ({ bytes, sha256: hash.digest('hex') }) };
}

/** A server that refuses (403) before it reads the body. */
async function earlyRefusingServer(servers: Server[]): Promise<string> {
  const { server, url } = await listen((_req, res) => {
    res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'signature_invalid', message: 'The URL expired.' }));
  });
  servers.push(server);
  return url;
}

/**
 * What a send to `earlyRefusingServer` must end in: the 403 itself or, if the server's close won the race, a
 * retryable connection error; never a hang.
 */
async function assertRefusedEarly(send: Promise<unknown>): Promise<void> {
  const err = await send.then(
    () => assert.fail('the upload should have been refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TransferError);
  assert.equal(err.retryable, true);
  if (err.status !== undefined) assert.equal(err.status, 403);
}

/** A server that cuts the connection once it has read a mebibyte of the body. */
async function cuttingServer(servers: Server[]): Promise<string> {
  const { server, url } = await listen((req) => {
    let seen = 0;
    req.on('data', (c: Buffer) => {
      seen += c.length;
      if (seen > 1024 * 1024) req.socket.destroy();
    });
  });
  servers.push(server);
  return url;
}

describe('putFile', () => {
  let dir: string;
  let file: string;
  const size = 5 * 1024 * 1024 + 321;
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i++) content[i] = (i * 7 + (i >> 13)) & 0xff;
  const servers: Server[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nds-transfer-'));
    file = path.join(dir, 'data.bin');
  });
  after(async () => {
    for (const s of servers) s.close();
    closeAgents();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends every byte of a file in order, and reports them all as progress', async () => {
    await writeFile(file, content);
    const { url, received } = await receivingServer(servers);
    let progress = 0;
    await putFile({ url: `${url}/x`, headers: {} }, file, size, (n) => (progress += n));
    assert.deepEqual(received(), { bytes: size, sha256: createHash('sha256').update(content).digest('hex') });
    assert.equal(progress, size);
  });

  it('reports a refusal sent before the body was read, as the status it is', async () => {
    await writeFile(file, content);
    const url = await earlyRefusingServer(servers);
    await assertRefusedEarly(putFile({ url: `${url}/x`, headers: {} }, file, size, () => undefined));
  });

  it('fails, retryable, when the connection is cut half-way', async () => {
    await writeFile(file, content);
    const url = await cuttingServer(servers);
    await assert.rejects(putFile({ url: `${url}/x`, headers: {} }, file, size, () => undefined), (e: unknown) => e instanceof TransferError && e.retryable);
  });

  it('refuses a file that became shorter than announced, without retrying', async () => {
    await writeFile(file, content);
    await truncate(file, 2 * 1024 * 1024);
    const { server, url } = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    servers.push(server);
    await assert.rejects(putFile({ url: `${url}/x`, headers: {} }, file, size, () => undefined), (e: unknown) => e instanceof TransferError && !e.retryable && /shrank/.test(e.message));
  });
});

describe('putBytes', () => {
  const size = 5 * 1024 * 1024 + 321;
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i++) content[i] = (i * 11 + (i >> 12)) & 0xff;
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.close();
    closeAgents();
  });

  // A part held in memory is sent from that memory: the same bytes the client hashed, each reported once.
  it('sends every byte of the buffer in order, and reports them all as progress', async () => {
    const { url, received } = await receivingServer(servers);
    let progress = 0;
    await putBytes({ url: `${url}/x`, headers: {} }, content, (n) => (progress += n));
    assert.deepEqual(received(), { bytes: size, sha256: createHash('sha256').update(content).digest('hex') });
    assert.equal(progress, size);
  });

  // The refusal of a damaged part (400 content_mismatch) is what makes the caller send it again.
  it('reports a refusal after the body as the status it is', async () => {
    const { server, url } = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'content_mismatch', message: 'The body is not what was signed.' })));
    });
    servers.push(server);
    await assert.rejects(putBytes({ url: `${url}/x`, headers: {} }, content, () => undefined), (e: unknown) => e instanceof TransferError && e.status === 400 && /content_mismatch/.test(e.message));
  });

  it('reports a refusal sent before the body was read, never hanging', async () => {
    const url = await earlyRefusingServer(servers);
    await assertRefusedEarly(putBytes({ url: `${url}/x`, headers: {} }, content, () => undefined));
  });

  it('fails, retryable, when the connection is cut half-way', async () => {
    const url = await cuttingServer(servers);
    await assert.rejects(putBytes({ url: `${url}/x`, headers: {} }, content, () => undefined), (e: unknown) => e instanceof TransferError && e.retryable);
  });
});
