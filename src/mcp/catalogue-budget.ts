/**
 * The anonymous catalogue budget for MCP callers: a tool or resource that walks the catalogue or the dataset
 * search (`list_recordings`, `search_datasets`, `get_dataset`, `nds://datasets/{id}`, `resources/list`) spends
 * one request of it, from the same limiter and under the same key as `GET /recordings` and
 * `GET /datasets/search` (`http/catalogue-limits.ts`, decision 0023), so `POST /mcp` is no way around it.
 */
import type { Context } from 'hono';
import { isNdsError, NdsError } from '../core/errors.js';
import type { AppEnv } from '../http/app-env.js';
import { countAnonymousCatalogueRequest } from '../http/catalogue-limits.js';

/**
 * Counts one catalogue walk of the request's caller: nothing for a signed-in caller, as on HTTP. Past the
 * budget it throws `rate_limited` whose message says the limit and the seconds to wait, and whose body carries
 * them as `limit_per_minute` and `retry_after_s`: a tool error reaches an agent without the `Retry-After`
 * header the HTTP routes answer.
 */
export async function spendCatalogueCall(c: Context<AppEnv>): Promise<void> {
  try {
    await countAnonymousCatalogueRequest(c);
  } catch (err) {
    if (!isNdsError(err, 'rate_limited')) throw err;
    const limit = c.var.deps.catalogueLimits.rule.points;
    const seconds = Number(err.headers['Retry-After']);
    throw new NdsError('rate_limited', {
      message: `This address has made ${limit} catalogue and search requests without an API key in the last minute, the most it may; try again in ${seconds} second${seconds === 1 ? '' : 's'}, or call with an API key.`,
      headers: err.headers,
      extra: { limit_per_minute: limit, retry_after_s: seconds },
    });
  }
}
