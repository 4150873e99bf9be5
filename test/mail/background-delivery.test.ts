/**
 * Posted mail is delivered after the answer (src/mail/background-delivery.ts): a failed try is logged, never
 * thrown, and tried again; `delivered()` lets a caller (a test) wait for it; closing cuts the waits between tries.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/core/log.js';
import { BackgroundDelivery, RETRY_DELAYS_MS } from '../../src/mail/background-delivery.js';
import type { MailMessage } from '../../src/mail/mailer.js';

function logSink(): { log: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>> } {
  let text = '';
  const sink = new PassThrough();
  sink.on('data', (chunk) => (text += chunk.toString()));
  return { log: createLogger('info', sink), lines: () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const message: MailMessage = { to: 'a@example.org', subject: 'nds sign-in code 123456', text: 'the code: 123456' };

describe('background delivery of posted mail', () => {
  it('returns at once, and delivered() resolves once the relay has the message', async () => {
    const sent: MailMessage[] = [];
    let accept!: () => void;
    const accepted = new Promise<void>((resolve) => (accept = resolve));
    const delivery = new BackgroundDelivery<MailMessage>(async (m) => {
      await accepted;
      sent.push(m);
    }, logSink().log);
    delivery.post(message);
    assert.deepEqual(sent, [], 'post waited for the relay');
    accept();
    await delivery.delivered();
    assert.deepEqual(sent, [message]);
  });

  it('a failed try is logged (without the code) and tried again; the last failure gives the message up, never throwing', async () => {
    const { log, lines } = logSink();
    let tries = 0;
    const delivery = new BackgroundDelivery<MailMessage>(async () => {
      tries++;
      throw new Error('relay down');
    }, log);
    assert.doesNotThrow(() => delivery.post(message));
    // Closing ends the waits between tries: every try is made at once.
    await delivery.close(5_000);
    assert.equal(tries, RETRY_DELAYS_MS.length + 1);
    const warnings = lines().filter((l) => l.to === message.to);
    assert.equal(warnings.length, tries);
    assert.match(String(warnings.at(-1)!.msg), /given up/);
    assert.ok(warnings.every((l) => !JSON.stringify(l).includes('123456')), 'a code reached the log');
  });

  it('a message that fails once is delivered by a later try', async () => {
    const sent: MailMessage[] = [];
    let tries = 0;
    const delivery = new BackgroundDelivery<MailMessage>(async (m) => {
      if (++tries === 1) throw new Error('421 try again later');
      sent.push(m);
    }, logSink().log);
    delivery.post(message);
    await delivery.close(5_000);
    assert.deepEqual(sent, [message]);
  });

  it('closing waits no longer than its limit for a relay that never answers, and says how many mails it drops', async () => {
    const { log, lines } = logSink();
    const delivery = new BackgroundDelivery<MailMessage>(() => new Promise<void>(() => {}), log);
    delivery.post(message);
    await delivery.close(50);
    assert.ok(lines().some((l) => l.undelivered === 1 && /dropped/.test(String(l.msg))));
  });
});
