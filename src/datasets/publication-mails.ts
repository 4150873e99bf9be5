/**
 * The mails of publication requests: to the administrators when an owner or maintainer asks (with the
 * recordings the last conversion could not convert, which a reviewer must see), to the owner when a maintainer
 * asks, and to the owner and the asker when the request is approved (with the DOI) or denied (with the reason),
 * or when an administrator makes the dataset private (a takedown, with their reason when they gave one).
 */
import type { ConversionFailure } from '../formats/zarr/conversion-failures.js';
import type { MailMessage } from '../mail/mailer.js';
import { quotedName } from './quoted-name.js';

export interface RequestFacts {
  id: number;
  dataset_id: string;
  dataset_name: string;
  version: string;
  requested_by_username: string | null;
  requested_by_email: string | null;
  message: string | null;
}

/** "Your request 7" to the one who asked; "Request 7 (by ada)" to the owner who did not. */
function whoseRequest(to: string, r: RequestFacts): string {
  return to === r.requested_by_email ? `Your request ${r.id}` : `Request ${r.id} (by ${r.requested_by_username ?? 'a former account'})`;
}

/** Most failed recordings a mail lists one by one; the rest are counted. */
const LISTED = 20;

export function failureLines(failures: readonly ConversionFailure[]): string[] {
  const lines = failures.slice(0, LISTED).map((f) => `  ${f.path}: ${f.code}: ${f.reason}`);
  if (failures.length > LISTED) lines.push(`  and ${failures.length - LISTED} more`);
  return lines;
}

export function publicationRequestedMail(publicUrl: string, to: string, r: RequestFacts, failures: readonly ConversionFailure[]): MailMessage {
  return {
    to,
    subject: `nds: ${r.requested_by_username ?? 'an owner'} asks to publish ${r.dataset_id} v${r.version}`,
    text: [
      `${r.requested_by_username ?? 'The owner'} asks to publish ${r.dataset_id} "${quotedName(r.dataset_name)}", version ${r.version} (request ${r.id}).`,
      ...(r.message ? ['', 'Their message:', ...r.message.split('\n').map((l) => `    ${l}`)] : []),
      ...(failures.length
        ? ['', `Warning: ${failures.length} recording${failures.length === 1 ? '' : 's'} of this dataset could not be converted:`, ...failureLines(failures)]
        : []),
      '',
      `The dataset: ${publicUrl}/datasets/${r.dataset_id}`,
      `Approve or deny it (with a reason) on ${publicUrl}/admin`,
      `or in a terminal: npx nds admin publish approve ${r.id}`,
      `                  npx nds admin publish deny ${r.id} --reason "..."`,
    ].join('\n'),
  };
}

export function publicationRequestedForOwnerMail(publicUrl: string, to: string, r: RequestFacts): MailMessage {
  return {
    to,
    subject: `nds: ${r.requested_by_username ?? 'a maintainer'} asks to publish your dataset ${r.dataset_id} v${r.version}`,
    text: [
      `${r.requested_by_username ?? 'A maintainer'} asks the administrators to publish ${r.dataset_id} "${quotedName(r.dataset_name)}", version ${r.version} (request ${r.id}).`,
      'If they approve it, the dataset becomes public with a DOI; you will get a mail either way.',
      ...(r.message ? ['', 'Their message:', ...r.message.split('\n').map((l) => `    ${l}`)] : []),
      '',
      `The dataset and its requests: ${publicUrl}/datasets/${r.dataset_id}/settings`,
    ].join('\n'),
  };
}

export function publicationApprovedMail(publicUrl: string, to: string, r: RequestFacts, doi: string | null): MailMessage {
  return {
    to,
    subject: `nds: ${r.dataset_id} v${r.version} is published`,
    text: [
      `${whoseRequest(to, r)} is approved: ${r.dataset_id} "${quotedName(r.dataset_name)}", version ${r.version}, is public now.`,
      ...(doi ? [`Its DOI: ${doi}`] : []),
      '',
      `${publicUrl}/datasets/${r.dataset_id}`,
    ].join('\n'),
  };
}

export function publicationDeniedMail(publicUrl: string, to: string, r: RequestFacts, reason: string): MailMessage {
  return {
    to,
    subject: `nds: publication of ${r.dataset_id} v${r.version} was denied`,
    text: [
      `${whoseRequest(to, r)} to publish ${r.dataset_id} "${quotedName(r.dataset_name)}", version ${r.version}, was denied, for this reason:`,
      '',
      ...reason.split('\n').map((line) => `    ${line}`),
      '',
      `Fix what it says and request publication again: ${publicUrl}/datasets/${r.dataset_id}/settings`,
    ].join('\n'),
  };
}

/** The administrator's reason, indented as a quote, or nothing when they gave none. */
function quotedReason(reason: string | undefined): string[] {
  return reason ? ['', 'Their reason:', '', ...reason.split('\n').map((line) => `    ${line}`)] : [];
}

/** To the owner: an administrator made the dataset private, and closed the pending request `closed`, if any. */
export function takenDownMail(publicUrl: string, to: string, d: { id: string; name: string }, closed: RequestFacts | undefined, reason: string | undefined): MailMessage {
  return {
    to,
    subject: `nds: an administrator made ${d.id} private`,
    text: [
      `An administrator made your dataset ${d.id} "${quotedName(d.name)}" private: it is no longer public, and only you, its members and the administrators see it.`,
      ...quotedReason(reason),
      ...(closed ? ['', `${whoseRequest(to, closed)} to publish version ${closed.version} was pending; it is closed, and nothing of it was published.`] : []),
      '',
      `Once the problem is settled, request publication again: ${publicUrl}/datasets/${d.id}/settings`,
    ].join('\n'),
  };
}

/** To whoever asked for a pending request a takedown closed, when they are not the owner. */
export function requestClosedMail(publicUrl: string, to: string, r: RequestFacts, reason: string | undefined): MailMessage {
  return {
    to,
    subject: `nds: your request to publish ${r.dataset_id} v${r.version} was closed`,
    text: [
      `An administrator made ${r.dataset_id} "${quotedName(r.dataset_name)}" private while your request ${r.id} to publish version ${r.version} was pending; the request is closed, and nothing of it was published.`,
      ...quotedReason(reason),
      '',
      `The dataset and its requests: ${publicUrl}/datasets/${r.dataset_id}/settings`,
    ].join('\n'),
  };
}
