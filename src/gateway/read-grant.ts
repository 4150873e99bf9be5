/**
 * The gateway's side of read grants (`datasets/read-grant.ts`): a GET or HEAD of a non-public dataset's
 * object carrying `Authorization: Bearer <grant>` is answered when the grant is valid for that dataset and
 * the account it was issued to may still read it, straight from the store, never cached, with
 * `Cache-Control: private, no-store`. Anything else is answered exactly as an unknown dataset (404), so a
 * grant cannot probe other datasets.
 */
import { mayStillRead } from '../datasets/dataset-access.js';
import { readGrantClaims, readGrantOf } from '../datasets/read-grant.js';
import type { Deps } from '../deps.js';
import type { GatewayAnswer } from './object-answers.js';

export class ReadGrantGate {
  readonly #deps: Pick<Deps, 'config' | 'db' | 'clock'>;

  constructor(deps: Pick<Deps, 'config' | 'db' | 'clock'>) {
    this.#deps = deps;
  }

  /**
   * True when `authorization` holds a valid grant of `datasetId` whose account may read the dataset now. The
   * dataset and the account are read on every call (not remembered): no grant outlives a deletion, the
   * dataset's publicity, or its holder's access.
   */
  async allows(authorization: string | undefined, datasetId: string): Promise<boolean> {
    const grant = readGrantOf(authorization);
    if (grant === undefined) return false;
    const claims = readGrantClaims(this.#deps.config, grant, this.#deps.clock.now());
    if (claims === undefined || claims.datasetId !== datasetId) return false;
    return mayStillRead(this.#deps.db, datasetId, claims.user, claims.signIn, this.#deps.clock.now());
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
