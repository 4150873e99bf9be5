import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BlobAttachments } from '../../src/mcp/blob-attachments.js';

const json = (value: unknown) => new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } });

describe('BlobAttachments: large bytes written into an MCP answer as it is sent', () => {
  it('answers exactly the JSON the SDK would have sent with the base64 inline, with its Content-Length', async () => {
    // Sizes around the 3-byte groups of base64 and its 384 KiB pieces, and an empty blob.
    const blobs = [0, 1, 2, 3, 4, 3 * 128 * 1024 - 1, 3 * 128 * 1024, 3 * 128 * 1024 + 1, 1_000_001].map((n) => randomBytes(n));
    const attachments = new BlobAttachments();
    const tokens = blobs.map((b) => attachments.attach(b));
    for (const t of tokens) assert.doesNotThrow(() => atob(t), 'a stand-in passes the SDK\'s base64 check');
    const message = { jsonrpc: '2.0', id: 1, result: { content: tokens.map((t, i) => ({ type: 'resource', resource: { uri: `x${i}`, blob: t } })), name: 'ünïcode ✓' } };
    const answer = await attachments.splice(json(message));
    const text = Buffer.from(await answer.arrayBuffer());
    assert.equal(answer.headers.get('content-length'), String(text.byteLength));
    assert.equal(answer.headers.get('content-type'), 'application/json');
    const expected = { ...message, result: { ...message.result, content: blobs.map((b, i) => ({ type: 'resource', resource: { uri: `x${i}`, blob: b.toString('base64') } })) } };
    assert.equal(text.toString('utf8'), JSON.stringify(expected));
  });

  it('sends bytes made on demand in pieces of any size, and breaks the answer off if they are not as many as promised', async () => {
    const bytes = randomBytes(200_003);
    const cuts = [0, 1, 7, 7, 50_000, 150_001, 200_003];
    const attachments = new BlobAttachments();
    const scratch = new Uint8Array(200_003);
    // Each piece is a view of one array reused for the next, as windowNpyPieces makes them.
    const token = attachments.attach({
      byteLength: bytes.byteLength,
      *pieces() {
        for (let i = 1; i < cuts.length; i++) {
          scratch.set(bytes.subarray(cuts[i - 1], cuts[i]));
          yield scratch.subarray(0, cuts[i]! - cuts[i - 1]!);
          scratch.fill(0);
        }
      },
    });
    const answer = await attachments.splice(json({ blob: token }));
    assert.deepEqual(await answer.json(), { blob: bytes.toString('base64') });
    const short = new BlobAttachments();
    const lying = short.attach({ byteLength: 10, pieces: () => [new Uint8Array(9)] });
    await assert.rejects((await short.splice(json({ blob: lying }))).text());
  });

  it('replaces a stand-in only where it is a whole JSON string, and leaves other answers alone', async () => {
    const attachments = new BlobAttachments();
    const token = attachments.attach(new Uint8Array([1, 2, 3]));
    // A stand-in inside a longer string (an echo of it in an error message, say) is not a blob.
    const echoed = await (await attachments.splice(json({ message: `not ${token} here`, blob: token }))).json();
    assert.deepEqual(echoed, { message: `not ${token} here`, blob: 'AQID' });
    const refusal = new Response('{"error":1}', { status: 400, headers: { 'content-type': 'application/json' } });
    assert.deepEqual(await (await attachments.splice(refusal)).json(), { error: 1 });
    const stream = new Response(`data: "${token}"\n\n`, { headers: { 'content-type': 'text/event-stream' } });
    assert.equal(await (await attachments.splice(stream)).text(), `data: "${token}"\n\n`);
    const nothing = new BlobAttachments();
    const plain = json({ a: 1 });
    assert.equal(await nothing.splice(plain), plain, 'no attachment: the answer itself');
  });

  it('makes a different stand-in for every blob', () => {
    const attachments = new BlobAttachments();
    const tokens = new Set(Array.from({ length: 1000 }, () => attachments.attach(new Uint8Array(1))));
    assert.equal(tokens.size, 1000);
  });
});
