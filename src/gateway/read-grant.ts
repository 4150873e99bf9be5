/**
 * The gateway's side of read grants (`datasets/read-grant.ts`): a GET or HEAD of a non-public dataset's
 * object carrying `Authorization: Bearer <grant>` is answered when the grant is valid for that dataset and
 * the dataset still exists, straight from the store, never cached, with `Cache-Control: private, no-store`.
 * Anything else is answered exactly as an unknown dataset (404), so a grant cannot probe other datasets.
 */
import { datasetVisibility } from '../datasets/dataset-queries.js';
import { grantReadsPrivate, readGrantOf } from '../datasets/read-grant.js';
import type { Deps } from '../deps.js';
import type { GatewayAnswer } from './object-answers.js';

export class ReadGrantGate {
  readonly #deps: Pick<Deps, 'config' | 'db' | 'clock'>;

  constructor(deps: Pick<Deps, 'config' | 'db' | 'clock'>) {
    this.#deps = deps;
  }

  /**
   * True when `authorization` holds a valid grant of `datasetId` and the dataset exists now. The dataset's
   * current state is read on every call (not remembered): a deletion is never outlived by a grant.
   */
  async allows(authorization: string | undefined, datasetId: string): Promise<boolean> {
    const grant = readGrantOf(authorization);
    if (grant === undefined) return false;
    if (!grantReadsPrivate(this.#deps.config, grant, datasetId, this.#deps.clock.now())) return false;
    return (await datasetVisibility(this.#deps.db, datasetId)) !== undefined;
  }
}

const PRIVATE = 'private, no-store';

/** The answer with `Cache-Control: private, no-store` and `X-Cache: BYPASS`, whatever it had. */
export function privateAnswer(answer: GatewayAnswer): GatewayAnswer {
  const headers: string[] = [];
  for (let i = 0; i < answer.headers.length; i += 2) {
    const name = answer.headers[i]!;
    if (name !== 'cache-control' && name !== 'x-cache') headers.push(name, answer.headers[i + 1]!);
  }
  headers.push('cache-control', PRIVATE, 'x-cache', 'BYPASS');
  return { ...answer, headers };
}
