/**
 * The mail a new member gets (`setMember`, src/datasets/dataset-members.ts) is limited per recipient (5 an hour)
 * and per account adding (30 an hour), through the shared rate limits (`datasets/dataset-limits.ts`): any
 * verified account owns a sandbox dataset it may share, name as it likes, and add and remove a person in a loop.
 * Past a limit the member is still added (201), just not mailed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MEMBER_MAILS_PER_ACTOR, MEMBER_MAILS_PER_RECIPIENT } from '../../src/datasets/dataset-limits.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { mailsTo, readOutbox } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { json } from './support.js';

const put = (role: string): RequestInit => ({ method: 'PUT', body: JSON.stringify({ role }) });

describe('mails to added members', () => {
  let server: TestServer;
  let sender: TestAccount;
  let id: string;

  before(async () => {
    server = await startTestServer();
    sender = await createAccount(server, { status: 'verified' });
    ({ id } = await json(await sender.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Cheap pills at https://spam.example' }) }), 201));
  });
  after(() => server.close());

  it(`reach one person at most ${MEMBER_MAILS_PER_RECIPIENT} times an hour, however often they are added`, async () => {
    assert.equal(MEMBER_MAILS_PER_RECIPIENT, 5);
    const person = await createAccount(server, { status: 'verified' });
    const member = `/datasets/${id}/members/${person.user.username}`;
    for (let i = 0; i < MEMBER_MAILS_PER_RECIPIENT + 3; i++) {
      assert.equal((await json(await sender.api(member, put('reader')), 201)).username, person.user.username, 'added, mailed or not');
      assert.equal((await sender.api(member, { method: 'DELETE' })).status, 204);
    }
    assert.equal((await mailsTo(server, person.user.email)).length, MEMBER_MAILS_PER_RECIPIENT);
    // An hour later the next addition is mailed again.
    server.clock.advance(3600_000);
    await json(await sender.api(member, put('reader')), 201);
    assert.equal((await mailsTo(server, person.user.email)).length, MEMBER_MAILS_PER_RECIPIENT + 1);
  });

  it(`are sent at most ${MEMBER_MAILS_PER_ACTOR} an hour by one account's additions, whoever it adds`, async () => {
    assert.equal(MEMBER_MAILS_PER_ACTOR, 30);
    server.clock.advance(3600_000);
    const people = await Promise.all(Array.from({ length: MEMBER_MAILS_PER_ACTOR + 2 }, () => createAccount(server, { status: 'verified' })));
    const before = (await readOutbox(server)).length;
    for (const person of people) await json(await sender.api(`/datasets/${id}/members/${person.user.username}`, put('reader')), 201);
    assert.equal((await readOutbox(server)).length - before, MEMBER_MAILS_PER_ACTOR);
    const { members } = await json(await sender.api(`/datasets/${id}/members`), 200);
    for (const person of people) assert.ok(members.some((m: { username: string }) => m.username === person.user.username), `${person.user.username} is a member`);
  });
});
