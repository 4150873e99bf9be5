/**
 * What a push brought, looked at before any ref moves (decision 0054): git's `pre-receive` hook, the one hook
 * the server runs. git has taken the pack by then, into the push's quarantine, and removes all of it when the
 * hook refuses; the client reads the hook's words as `remote:` lines and its refs as `[remote rejected]`. The
 * hook refuses a blob larger than MAX_GIT_FILE_BYTES (a git-lfs pointer is a few hundred bytes: large files
 * go through git-lfs) and objects that hold more than a push may bring, inflated: a pack of zeros or of
 * repeated deltas is small on the wire and on disk, and every later reader would inflate it again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The bounds the hook checks. */
export interface ReceiveCheckBounds {
  /** The largest blob a push may bring. */
  maxBlobBytes: number;
  /** The most bytes its new objects may hold together, inflated. */
  maxContentBytes: number;
}

/**
 * The hook. It reads the sizes of the objects in the quarantine only (no alternates, so not the repository's
 * own objects): `cat-file --batch-check` takes a delta's size from its header, without building it. A listing
 * cut short (git killed at its limits) refuses the push too: `end` comes only after a whole one. A push with
 * nothing new (a ref deleted) has no quarantine and nothing to look at.
 */
const PRE_RECEIVE = `#!/bin/sh
# nds: the checks of a push (src/git/receive-checks.ts), run by git before any ref moves.
cat >/dev/null
[ -n "\${GIT_QUARANTINE_PATH:-}" ] || exit 0
max_blob=$(git config --get nds.maxBlobBytes) || exit 1
max_content=$(git config --get nds.maxContentBytes) || exit 1
{
  GIT_ALTERNATE_OBJECT_DIRECTORIES= git cat-file --batch-all-objects --unordered --batch-check='%(objecttype) %(objectsize) %(objectname)' && echo end
} | awk -v max_blob="$max_blob" -v max_content="$max_content" '
  $1 == "end" { whole = 1; next }
  { content += $2 }
  $1 == "blob" && $2 + 0 > max_blob + 0 { if (!large) { blob = $3; size = $2 } large++ }
  END {
    if (!whole) {
      print "nds: the objects of this push could not be read through; nothing of it was kept."
      exit 1
    }
    if (large) {
      printf "nds: blob %s holds %.0f bytes (%.1f MiB), more than the %.0f bytes a file may hold in git itself here (MAX_GIT_FILE_BYTES)", blob, size, size / 1048576, max_blob
      if (large > 1) printf "; so do %d more blobs", large - 1
      print "."
      print "nds: Large files go through git-lfs: \`git lfs migrate import --include=<path>\` rewrites the commits that hold one, and \`git rev-list --objects --all | grep " blob "\` names its path. Nothing of this push was kept."
      exit 1
    }
    if (content > max_content + 0) {
      printf "nds: the objects of this push hold %.0f bytes uncompressed, more than the %.0f bytes one push may bring. Push fewer commits at a time, and large files through git-lfs. Nothing of this push was kept.\\n", content, max_content
      exit 1
    }
  }' >&2
`;

/** The settings (as `git -c`) the hook reads its bounds from. */
export function receiveCheckSettings(bounds: ReceiveCheckBounds): Record<string, string> {
  return { 'nds.maxBlobBytes': String(bounds.maxBlobBytes), 'nds.maxContentBytes': String(bounds.maxContentBytes) };
}

/** Whether git would run `file` as a hook: it runs one only where `access(X_OK)` allows, and skips it otherwise. */
async function runnable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * The folder of the hook under `root` (the repositories' folder), for a push's `core.hooksPath`; written on
 * first use, named by its content, so a folder once written never changes (a hook is never rewritten while git
 * runs it). Throws where git could not run the hook (a file system mounted `noexec`): git would take every push
 * unchecked.
 */
export async function receiveHooksDir(root: string): Promise<string> {
  const dir = path.join(root, `.receive-hooks-${createHash('sha256').update(PRE_RECEIVE).digest('hex').slice(0, 12)}`);
  const hook = path.join(dir, 'pre-receive');
  if (await runnable(hook)) return dir;
  await mkdir(dir, { recursive: true });
  const written = `${hook}.${randomBytes(6).toString('hex')}`;
  await writeFile(written, PRE_RECEIVE);
  await chmod(written, 0o755);
  await rename(written, hook);
  if (!(await runnable(hook))) throw new Error(`git could not run the push checks at ${hook} (a file system mounted noexec?); no push is taken unchecked`);
  return dir;
}
