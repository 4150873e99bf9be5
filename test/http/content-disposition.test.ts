/** The `Content-Disposition` of downloads named after a dataset's files (RFC 6266, RFC 8187). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachmentDisposition } from '../../src/http/content-disposition.js';

describe('attachmentDisposition', () => {
  it('names a plain file in a quoted filename alone', () => {
    assert.equal(attachmentDisposition('sub-01_task-rest_events.tsv'), 'attachment; filename="sub-01_task-rest_events.tsv"');
  });

  it('gives any other name as a safe ASCII filename and the exact name in filename*, percent-encoded UTF-8', () => {
    assert.equal(
      attachmentDisposition(`a";filename*=UTF-8''evil%2Ehtml;x="_events.tsv`),
      `attachment; filename="a__filename__UTF-8__evil_2Ehtml_x___events.tsv"; filename*=UTF-8''a%22%3Bfilename%2A%3DUTF-8%27%27evil%252Ehtml%3Bx%3D%22_events.tsv`,
    );
    assert.equal(attachmentDisposition('sub-Zoë 1\\\r\n_events.tsv'), `attachment; filename="sub-Zo__1____events.tsv"; filename*=UTF-8''sub-Zo%C3%AB%201%5C%0D%0A_events.tsv`);
  });

  it('writes a character outside the Basic Multilingual Plane as one fallback character, and a lone surrogate as U+FFFD', () => {
    assert.equal(attachmentDisposition('🧠.tsv'), `attachment; filename="_.tsv"; filename*=UTF-8''%F0%9F%A7%A0.tsv`);
    assert.equal(attachmentDisposition('a\ud800.tsv'), `attachment; filename="a_.tsv"; filename*=UTF-8''a%EF%BF%BD.tsv`);
  });
});
