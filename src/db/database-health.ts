/** Whether the database answers, for `/healthz` and `/readyz`: a trivial query, bounded in time. */
import { sql, type Kysely } from 'kysely';
import type { Database } from './types.js';

/** How long a health check waits for the database before calling it down. */
export const HEALTH_TIMEOUT_MS = 2000;

/** True when `select 1` comes back within `timeoutMs`; false when it fails or takes longer (it never throws). */
export async function databaseAnswers(db: Kysely<Database>, timeoutMs = HEALTH_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}
