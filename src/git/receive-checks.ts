/**
 * What a push brought, looked at before any ref moves (decision 0054): git's `pre-receive` hook, the one hook
 * the server runs. git has taken the pack by then, into the push's quarantine, and removes all of it when the
 * hook refuses; the client reads the hook's words as `remote:` lines and its refs as `[remote rejected]`. The
 * hook refuses an object larger than MAX_GIT_FILE_BYTES (a git-lfs pointer is a few hundred bytes: large files
 * go through git-lfs; no commit, tag or tree needs to be that large) and objects that hold more than a push may
 * bring, inflated: a pack of zeros or of repeated deltas is small on the wire and on disk, and every later
 * reader would inflate it again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The bounds the hook checks. */
export interface ReceiveCheckBounds {
  /** The largest object (a blob, and so a commit, tag or tree too) a push may bring. */
  maxObjectBytes: number;
  /** The most bytes its new objects may hold together, inflated. */
  maxContentBytes: number;
}

/**
 * The hook. It bounds the objects the push brought, which are not all the quarantine holds: for a thin pack,
 * `index-pack --fix-thin` copies the bases the client left out, objects the repository already has, into the
 * quarantine's pack. So the quarantine's object names (no alternates: its own objects only) are looked up in
 * the repository's own object directory (GIT_OBJECT_DIRECTORY unset: `$GIT_DIR/objects`, no quarantine), and
 * only those it lacks (`missing`) are sized and bounded. `cat-file --batch-check` takes a delta's size from its
 * header, without building it. A listing cut short (git killed at its limits) refuses the push too: the null
 * object name, sent after the last name, comes out of the last stage only after a whole listing went through
 * every one. A push with nothing new (a ref deleted) has no quarantine and nothing to look at.
 */
const PRE_RECEIVE = `#!/bin/sh
# nds: the checks of a push (src/git/receive-checks.ts), run by git before any ref moves.
cat >/dev/null
[ -n "\${GIT_QUARANTINE_PATH:-}" ] || exit 0
max_object=$(git config --get nds.maxObjectBytes) || exit 1
max_content=$(git config --get nds.maxContentBytes) || exit 1
{
  GIT_ALTERNATE_OBJECT_DIRECTORIES= git cat-file --batch-all-objects --unordered --batch-check='%(objectname)' &&
    echo 0000000000000000000000000000000000000000
} | (
  unset GIT_OBJECT_DIRECTORY
  GIT_ALTERNATE_OBJECT_DIRECTORIES= exec git cat-file --buffer --batch-check='%(objectname) held'
) | git cat-file --buffer --batch-check='%(objecttype) %(objectsize) %(objectname) %(rest)' |
awk -v max_object="$max_object" -v max_content="$max_content" '
  NF == 2 && $2 == "missing" { if ($1 ~ /^0+$/) whole = 1; else unread++; next }
  $4 != "missing" { next }
  { content += $2 }
  $2 + 0 > max_object + 0 && $1 == "blob" { if (!large_blobs) { blob = $3; blob_size = $2 } large_blobs++ }
  $2 + 0 > max_object + 0 && $1 != "blob" { if (!large_others) { other = $3; other_type = $1; other_size = $2 } large_others++ }
  END {
    if (!whole || unread) {
      print "nds: the objects of this push could not be read through; nothing of it was kept."
      exit 1
    }
    if (large_blobs) {
      printf "nds: blob %s holds %.0f bytes (%.1f MiB), more than the %.0f bytes a file may hold in git itself here (MAX_GIT_FILE_BYTES)", blob, blob_size, blob_size / 1048576, max_object
      if (large_blobs > 1) printf "; so do %d more blobs", large_blobs - 1
      print "."
      print "nds: Large files go through git-lfs: \`git lfs migrate import --include=<path>\` rewrites the commits that hold one, and \`git rev-list --objects --all | grep " blob "\` names its path. Nothing of this push was kept."
      exit 1
    }
    if (large_others) {
      printf "nds: %s %s holds %.0f bytes (%.1f MiB), more than the %.0f bytes one object may hold in git here (MAX_GIT_FILE_BYTES)", other_type, other, other_size, other_size / 1048576, max_object
      if (large_others > 1) printf "; so do %d more objects", large_others - 1
      print "."
      print "nds: A commit message, tag or directory listing that large is not taken. Nothing of this push was kept."
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
  return { 'nds.maxObjectBytes': String(bounds.maxObjectBytes), 'nds.maxContentBytes': String(bounds.maxContentBytes) };
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
