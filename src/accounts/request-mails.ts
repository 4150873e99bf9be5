/**
 * The mails of requests that need a person: to the administrators when someone asks for upload access, and
 * to the person when it is granted or denied (with the reason). Plain text, short, with the link to act on.
 */
import type { MailMessage } from '../mail/mailer.js';

export function uploadAccessRequestedMail(publicUrl: string, to: string, requester: { username: string; email: string }): MailMessage {
  return {
    to,
    subject: `nds: ${requester.username} asks for upload access`,
    text: [
      `${requester.username} (${requester.email}) asks for upload access: to create real datasets and publish them.`,
      '',
      `Approve or deny it (with a reason) on ${publicUrl}/admin`,
      `or in a terminal: npx nds admin users approve ${requester.username}`,
      `                  npx nds admin users deny ${requester.username} --reason "..."`,
    ].join('\n'),
  };
}

export function uploadAccessApprovedMail(publicUrl: string, to: string, username: string): MailMessage {
  return {
    to,
    subject: 'nds: your upload access is granted',
    text: [
      `${username}, an administrator granted you upload access: you may now create datasets and upload to them`,
      '(after the sandbox training, if you have not done it yet).',
      '',
      `Your account: ${publicUrl}/account`,
    ].join('\n'),
  };
}

export function uploadAccessDeniedMail(publicUrl: string, to: string, username: string, reason: string): MailMessage {
  return {
    to,
    subject: 'nds: your request for upload access was denied',
    text: [
      `${username}, an administrator denied your request for upload access, for this reason:`,
      '',
      ...reason.split('\n').map((line) => `    ${line}`),
      '',
      `You can ask again from ${publicUrl}/account once that is settled; sandbox datasets stay open to you.`,
    ].join('\n'),
  };
}
