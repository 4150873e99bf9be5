/**
 * The client of an OpenAI-compatible embeddings API: `POST <EMBEDDINGS_URL>/embeddings {model, input}` →
 * `{data: [{index, embedding}]}`. EMBEDDINGS_URL is the API base (`https://api.openai.com/v1`); a URL that
 * already ends in `/embeddings` is used as it is.
 */
import type { Config } from '../core/config.js';

const TIMEOUT_MS = 15_000;

export function embeddingsEndpoint(base: string): string {
  return /\/embeddings\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/embeddings`;
}

/** One vector per text, in order. Throws with a short reason when the endpoint fails or answers oddly. */
export async function embedTexts(config: Pick<Config, 'embeddingsUrl' | 'embeddingsApiKey' | 'embeddingsModel'>, texts: string[]): Promise<number[][]> {
  if (!config.embeddingsUrl) throw new Error('EMBEDDINGS_URL is not set');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (config.embeddingsApiKey) headers.authorization = `Bearer ${config.embeddingsApiKey}`;
  let res: Response;
  try {
    res = await fetch(embeddingsEndpoint(config.embeddingsUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: config.embeddingsModel, input: texts }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new Error(`cannot reach the embeddings endpoint (${(err as Error).message})`, { cause: err });
  }
  if (!res.ok) throw new Error(`the embeddings endpoint answered ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as { data?: Array<{ index?: number; embedding?: unknown }> } | undefined;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== texts.length) throw new Error('the embeddings endpoint answered without one vector a text');
  const out: number[][] = new Array(texts.length);
  for (const [i, item] of data.entries()) {
    const at = typeof item.index === 'number' ? item.index : i;
    if (!Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === 'number')) throw new Error('the embeddings endpoint answered a vector that is not numbers');
    out[at] = item.embedding as number[];
  }
  const dims = out[0]?.length;
  if (!dims || out.some((v) => !v || v.length !== dims)) throw new Error('the embeddings endpoint answered vectors of unequal length');
  return out;
}
