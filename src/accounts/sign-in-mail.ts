/** The texts of the mails that sign-in sends: plain text, short, with the one thing the reader needs. */
import type { MailMessage } from '../mail/mailer.js';
import { LOGIN_CODE_LIFETIME_S } from './login-codes.js';

export function signInCodeMail(publicUrl: string, to: string, code: string, username: string): MailMessage {
  const link = `${publicUrl}/login?step=code&email=${encodeURIComponent(to)}`;
  return {
    to,
    subject: `nds sign-in code ${code}`,
    text: [
      `Your nds sign-in code for ${username} is:`,
      '',
      `    ${code}`,
      '',
      `Type it on the sign-in page (${link}). It works for ${LOGIN_CODE_LIFETIME_S / 60} minutes, once.`,
      '',
      'If you did not ask for it, ignore this mail: nobody can sign in without the code.',
    ].join('\n'),
  };
}

/** Sent when someone asks for a code for an address that no account uses, so the answer reveals nothing. */
export function noAccountMail(publicUrl: string, to: string): MailMessage {
  return {
    to,
    subject: 'nds sign-in: no account uses this address',
    text: [
      'Someone (perhaps you) asked to sign in to nds with this address, but no account uses it.',
      '',
      `To create an account, go to ${publicUrl}/signup`,
      '',
      'If you did not ask, ignore this mail.',
    ].join('\n'),
  };
}

/**
 * Sent instead of a verification code when a sign-up names an address an account uses already (the sign-up
 * answers as for a new address): its owner learns of the attempt and how to sign in.
 */
export function signUpWithAddressInUseMail(publicUrl: string, to: string): MailMessage {
  const link = `${publicUrl}/login?step=code&email=${encodeURIComponent(to)}`;
  return {
    to,
    subject: 'nds: someone tried to sign up with this address',
    text: [
      'Someone (perhaps you) tried to create an nds account with this address. An account uses it already, so',
      'no account was made and nothing of yours changed.',
      '',
      `To sign in to your account, ask for a sign-in code on ${link}`,
      '',
      'If it was not you, ignore this mail.',
    ].join('\n'),
  };
}

export function keyRegenerationMail(publicUrl: string, to: string, token: string, lifetimeS: number): MailMessage {
  return {
    to,
    subject: 'nds: confirm a new API key',
    text: [
      'Someone (perhaps you) asked for a new nds API key for this account.',
      '',
      `To get it, open ${publicUrl}/auth/confirm-key-regeneration?token=${token}`,
      '',
      `The link works for ${lifetimeS / 3600} hour, once. The new key replaces the keys earlier obtained through`,
      'this link or by email and password; keys from `nds auth login` stay valid.',
      '',
      'Better: run `nds auth login`, which needs no mail and no password.',
      'If you did not ask, ignore this mail.',
    ].join('\n'),
  };
}

/**
 * The verification mail of the legacy password sign-up: the same 6-digit code as a sign-in. The sign-up's own code
 * keeps the password it set, so its mail says whose password that is; a resent one verifies without it.
 */
export function verificationMail(publicUrl: string, to: string, code: string, username: string, options: { keepsPassword: boolean }): MailMessage {
  const link = `${publicUrl}/login?step=code&email=${encodeURIComponent(to)}`;
  const password = options.keepsPassword
    ? ['This sign-up set a password: whoever chose it can sign in to the account once this code verifies it.', 'If you did not sign up, do not type this code: ignore this mail.']
    : ['This code verifies the address without the password given at the sign-up: sign in by a mailed code afterwards.', 'If you did not sign up, ignore this mail.'];
  return {
    to,
    subject: `nds: verify your address (code ${code})`,
    text: [
      `Welcome to nds, ${username}. To verify this address, type this code:`,
      '',
      `    ${code}`,
      '',
      `on ${link}`,
      `It works for ${LOGIN_CODE_LIFETIME_S / 60} minutes, once; ask for another one there when it has expired.`,
      '',
      ...password,
    ].join('\n'),
  };
}
