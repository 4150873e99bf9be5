/**
 * Reads the mails a test server wrote to `<dataDir>/outbox/` (no SMTP configured): the real mail, as sent.
 * Some mails are delivered after the request that posted them has answered (`Mailer.post`). Given the server
 * (of this process), each reader first waits until its mailer has delivered every mail posted so far, so a read
 * right after a request sees that request's mails, and "no mail was sent" is a sound conclusion. Given only a data
 * folder (a server in another process), `latestMailTo` and `signInCodeFor` wait for a new mail to appear.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Mailer } from '../../src/mail/mailer.js';

/** A test server of this process (its mails are awaited), or the data folder of a server elsewhere. */
export type OutboxOf = string | { dataDir: string; deps: { mailer: Pick<Mailer, 'delivered'> } };

/** The data folder of `of`, once every mail its server posted so far is delivered. */
async function settled(of: OutboxOf): Promise<string> {
  if (typeof of === 'string') return of;
  await of.deps.mailer.delivered();
  return of.dataDir;
}

export interface OutboxMail {
  file: string;
  to: string;
  subject: string;
  text: string;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
  return bytes.toString('utf8');
}

function parseMail(file: string, raw: string): OutboxMail {
  const split = raw.indexOf('\n\n');
  const head = raw.slice(0, split).replace(/\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  let text = raw.slice(split + 2);
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(text);
  else if (encoding === 'base64') text = Buffer.from(text, 'base64').toString('utf8');
  return { file, to: header('To'), subject: header('Subject'), text };
}

/** Every mail in the outbox, oldest first. */
export async function readOutbox(of: OutboxOf): Promise<OutboxMail[]> {
  const dir = path.join(await settled(of), 'outbox');
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.eml')).sort();
  } catch {
    return [];
  }
  return Promise.all(names.map(async (n) => parseMail(n, await readFile(path.join(dir, n), 'utf8'))));
}

/** Mails to `address` (case-insensitive), oldest first. */
export async function mailsTo(of: OutboxOf, address: string): Promise<OutboxMail[]> {
  return (await readOutbox(of)).filter((m) => m.to.toLowerCase().includes(address.toLowerCase()));
}

/**
 * The newest mail to `address`, which must be newer than the first `after` mails to it. Given a server, its
 * mailer's deliveries are awaited and the outbox read once; given a data folder, waits up to `timeoutMs` for it.
 */
export async function latestMailTo(of: OutboxOf, address: string, after = 0, timeoutMs = 5000): Promise<OutboxMail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mails = await mailsTo(of, address);
    if (mails.length > after) return mails[mails.length - 1]!;
    if (typeof of !== 'string' || Date.now() > deadline) throw new Error(`no mail to ${address} in the outbox (${mails.length} there, expected more than ${after})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The 6-digit sign-in code of the newest mail to `address` (newer than the first `after` mails to it). */
export async function signInCodeFor(of: OutboxOf, address: string, after = 0): Promise<string> {
  const mail = await latestMailTo(of, address, after);
  const code = /^\s+(\d{6})\s*$/m.exec(mail.text)?.[1];
  if (!code) throw new Error(`no sign-in code in the mail to ${address}: ${mail.subject}`);
  return code;
}

/** The outboxes (of several nodes' `dataDirs`) holding a mail to `address`: whichever node sent it; waits up to 5 s for one. */
export async function waitForMail(dataDirs: string[], address: string): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found: string[] = [];
    for (const dir of dataDirs) if ((await mailsTo(dir, address)).length > 0) found.push(dir);
    if (found.length > 0) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${address} in any of the outboxes`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
