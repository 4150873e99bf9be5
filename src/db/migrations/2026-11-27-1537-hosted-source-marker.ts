/**
 * A dataset whose repository is its own hosted one stores the marker `hosted` in `source_repo`, no longer the
 * repository's folder on the server's disk: the row's id says which repository, so no value can name another
 * dataset's, and hosted repositories may move off the local disk. A row holding a path that ends in its own
 * `/<id>.git` becomes the marker; every other path stays as it was and is refused at its next conversion.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update datasets set source_repo = 'hosted'
    where left(source_repo, 1) = '/' and right(source_repo, length(id) + 5) = '/' || id || '.git'
  `.execute(db);
}
