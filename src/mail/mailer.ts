/**
 * Outgoing mail: SMTP when `SMTP_URL` is set, otherwise each message is written to
 * `<DATA_DIR>/outbox/` as an `.eml` file (and logged without its body), so a local install works with no relay.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../core/log.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

/**
 * A subject as the log may hold it: a sign-in or verification code rides in its subject (to be read on a
 * phone's lock screen), and a code in a log signs its reader in. Every number of six or more digits is
 * masked (a dataset id such as nd000123 is not a number of its own and stays).
 */
export function loggedSubject(subject: string): string {
  return subject.replace(/\b\d{6,}\b/g, (digits) => '#'.repeat(digits.length));
}

export async function createMailer(options: { smtpUrl?: string; from: string; outboxDir: string; log: Logger }): Promise<Mailer> {
  const nodemailer = await import('nodemailer');
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(m) {
        await transport.sendMail({ from: options.from, to: m.to, subject: m.subject, text: m.text });
        options.log.info({ to: m.to, subject: loggedSubject(m.subject) }, 'mail sent');
      },
      async close() {
        transport.close();
      },
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(m) {
      const info = await transport.sendMail({ from: options.from, to: m.to, subject: m.subject, text: m.text });
      await mkdir(options.outboxDir, { recursive: true });
      const file = path.join(options.outboxDir, `${Date.now()}-${randomBytes(4).toString('hex')}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      options.log.info({ to: m.to, subject: loggedSubject(m.subject), file }, 'mail written to outbox');
    },
    async close() {},
  };
}

/** The mailer of a process that sends no mail (`nds gateway`, `nds worker`): a send is a programming error. */
export function noMailer(): Mailer {
  return {
    async send() {
      throw new Error('this process opened no mailer');
    },
    async close() {},
  };
}

/**
 * Sends mails that tell people about something already done (a request recorded, a decision taken): a mail
 * that cannot go out is logged, never thrown, so the action it reports stands. Sent one after another, before
 * the answer, so an outbox holds them when the request returns.
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
