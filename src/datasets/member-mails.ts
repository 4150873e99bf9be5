/** The mail that tells a person a dataset was shared with them (decision 0028). */
import type { MemberRole } from '../db/datasets-tables.js';
import type { MailMessage } from '../mail/mailer.js';
import { quotedName } from './quoted-name.js';

const WHAT_A_ROLE_DOES: Record<MemberRole, string> = {
  reader: 'read it wherever its owner can: its page and viewer, its recordings, signals and events, downloads and git clone',
  annotator: 'read it, and annotate its recordings in the viewer or through the API',
  maintainer: 'read and annotate it, upload and push versions, edit its metadata, manage its members and request its publication',
};

export function memberAddedMail(publicUrl: string, to: string, m: { datasetId: string; datasetName: string; role: MemberRole; addedBy: string }): MailMessage {
  return {
    to,
    subject: `nds: ${m.addedBy} shared ${m.datasetId} with you`,
    text: [
      `${m.addedBy} added you to ${m.datasetId} "${quotedName(m.datasetName)}" as ${m.role === 'annotator' ? 'an' : 'a'} ${m.role}: you may ${WHAT_A_ROLE_DOES[m.role]}.`,
      '',
      `The dataset: ${publicUrl}/datasets/${m.datasetId}`,
      `To leave it: npx nds datasets members remove ${m.datasetId} <your username>`,
    ].join('\n'),
  };
}
