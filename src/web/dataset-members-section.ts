/** The members section of a dataset's settings page (decision 0028): who it is shared with, a form to add or change a role, a button to remove. */
import type { PresentedMember } from '../datasets/dataset-members.js';
import { html, type SafeHtml } from './html.js';

const ROLE_SENTENCES = {
  reader: 'reads the dataset wherever you can: its page, viewer, recordings, signals, events, downloads and git clone',
  annotator: 'also annotates its recordings',
  maintainer: 'also uploads and pushes, edits metadata, manages members, commits annotations and requests publication',
} as const;

export function membersSection(datasetId: string, owner: string, members: readonly PresentedMember[], you: string): SafeHtml {
  const rows = members.map(
    (m) => html`<tr><td>${m.username}</td><td>${m.role}</td><td class="muted">${m.added_by ?? ''}</td><td>
<form method="post" action="/datasets/${datasetId}/settings/members/remove"><input type="hidden" name="username" value="${m.username}"><button class="danger" type="submit">${m.username === you ? 'Leave' : 'Remove'}</button></form></td></tr>`,
  );
  return html`<section class="card" id="members"><h2>Members</h2>
<p>Share the dataset with named people. A <strong>reader</strong> ${ROLE_SENTENCES.reader}; an <strong>annotator</strong> ${ROLE_SENTENCES.annotator}; a <strong>maintainer</strong> ${ROLE_SENTENCES.maintainer}. Only the owner and administrators change its visibility; a removed member loses access at once.</p>
<table class="members"><thead><tr><th>Member</th><th>Role</th><th>Added by</th><th></th></tr></thead><tbody>
<tr><td>${owner}</td><td>owner</td><td></td><td></td></tr>
${rows}
</tbody></table>
<form class="stack" method="post" action="/datasets/${datasetId}/settings/members">
<label>Username<input type="text" name="username" maxlength="64" required autocomplete="off"></label>
<label>Role<select name="role"><option value="reader">reader</option><option value="annotator">annotator</option><option value="maintainer">maintainer</option></select></label>
<button type="submit">Add, or change the role</button>
<p class="muted">A person added is told by mail. In a terminal: <code>npx nds datasets members add ${datasetId} &lt;username&gt; --role annotator</code>.</p>
</form></section>`;
}
