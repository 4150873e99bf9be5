/**
 * Outgoing mail: SMTP when `SMTP_URL` is set, otherwise each message is written to
 * `<DATA_DIR>/outbox/` as an `.eml` file (and logged without its body), so a local install works with no relay.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../core/log.js';
import { BackgroundDelivery } from './background-delivery.js';
import { loggedSubject } from './subject-log.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Sends now: resolves once the relay (or the outbox folder) holds the message; throws when it is refused. */
  send(message: MailMessage): Promise<void>;
  /**
   * Hands a message to delivery that runs after the caller has answered, and returns at once: never waits for the
   * relay, never throws. A failed try is logged and tried again (`background-delivery.ts`). What a route mails
   * only for some addresses goes this way, so its answer takes the same time whatever the address.
   */
  post(message: MailMessage): void;
  /** Resolves once every message posted so far is delivered or given up (tests wait on it before reading the outbox). */
  delivered(): Promise<void>;
  /** Waits (up to 10 s) for the posted messages, then closes the transport. */
  close(): Promise<void>;
}

/** How long `close` waits for posted messages still on their way. */
const CLOSE_WAIT_MS = 10_000;

export async function createMailer(options: { smtpUrl?: string; from: string; outboxDir: string; log: Logger }): Promise<Mailer> {
  const nodemailer = await import('nodemailer');
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return withBackgroundDelivery(
      async (m) => {
        await transport.sendMail({ from: options.from, to: m.to, subject: m.subject, text: m.text });
        options.log.info({ to: m.to, subject: loggedSubject(m.subject) }, 'mail sent');
      },
      () => transport.close(),
      options.log,
    );
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return withBackgroundDelivery(
    async (m) => {
      const info = await transport.sendMail({ from: options.from, to: m.to, subject: m.subject, text: m.text });
      await mkdir(options.outboxDir, { recursive: true });
      const file = path.join(options.outboxDir, `${Date.now()}-${randomBytes(4).toString('hex')}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      options.log.info({ to: m.to, subject: loggedSubject(m.subject), file }, 'mail written to outbox');
    },
    () => {},
    options.log,
  );
}

function withBackgroundDelivery(send: (m: MailMessage) => Promise<void>, closeTransport: () => void, log: Logger): Mailer {
  const background = new BackgroundDelivery(send, log);
  return {
    send,
    post: (m) => background.post(m),
    delivered: () => background.delivered(),
    async close() {
      await background.close(CLOSE_WAIT_MS);
      closeTransport();
    },
  };
}

/** The mailer of a process that sends no mail (`nds gateway`, `nds worker`): a send is a programming error. */
export function noMailer(): Mailer {
  return {
    async send() {
      throw new Error('this process opened no mailer');
    },
    post() {
      throw new Error('this process opened no mailer');
    },
    async delivered() {},
    async close() {},
  };
}

/**
 * Sends mails that tell people about something already done (a request recorded, a decision taken): a mail
 * that cannot go out is logged, never thrown, so the action it reports stands. Sent one after another, before
 * the answer, so an outbox holds them when the request returns. (Whether these mails go out depends on nothing
 * the caller may not know; a mail sent for some addresses only is `Mailer.post`ed instead.)
 */
export async function notify(deps: { mailer: Mailer; log: Logger }, messages: readonly MailMessage[]): Promise<void> {
  for (const m of messages) {
    try {
      await deps.mailer.send(m);
    } catch (err) {
      deps.log.warn({ err, to: m.to, subject: loggedSubject(m.subject) }, 'a notification mail could not be sent');
    }
  }
}
