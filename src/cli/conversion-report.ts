/** The conversion's failures as `nds datasets show` and `nds admin zarr status` print them. */
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { ApiError, type ApiClient } from './api-client.js';
import { terminalSafe } from './terminal-text.js';

export interface FailureLine {
  path: string;
  code: string;
  reason: string;
}

/** One block: a heading with the count, then each recording, its code and its reason on the next line. */
export function formatFailures(failures: FailureLine[]): string {
  if (failures.length === 0) return '';
  const lines = [`${failures.length} recording${failures.length === 1 ? '' : 's'} could not be converted:`];
  for (const f of failures) lines.push(`  ${terminalSafe(f.path, { oneLine: true })}  [${terminalSafe(f.code, { oneLine: true })}]`, `    ${terminalSafe(f.reason, { oneLine: true })}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The failures of a dataset's last conversion from `GET /datasets/:id/recordings`, readable by whoever can
 * read the dataset; undefined when the server has no such route (an older server).
 */
export async function fetchFailures(api: ApiClient, id: string): Promise<FailureLine[] | undefined> {
  try {
    const answer = await api.request<{ failures?: FailureLine[] }>(`/datasets/${encodeURIComponent(id)}/recordings`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
    return answer.failures ?? [];
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && err.code === 'not_found') return undefined;
    throw err;
  }
}
