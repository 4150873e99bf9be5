/**
 * `LISTEN` on a PostgreSQL channel over a connection of its own (a pooled one cannot hold a subscription).
 * A connection that drops is replaced after a pause; what was announced meanwhile is found by the caller's
 * polling, so a lost notification costs only latency. PGlite has no second connection: callers poll there.
 */
import pg from 'pg';

const RECONNECT_MS = 5000;

export async function listenTo(databaseUrl: string, channel: string, onNotify: () => void, onError: (err: Error) => void): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl, keepAlive: true });
    next.on('notification', () => onNotify());
    next.on('error', (err) => {
      onError(err);
      next.end().catch(() => {});
      if (client === next) client = undefined;
      if (!closed) retry = setTimeout(() => void connect().catch(onError), RECONNECT_MS);
    });
    await next.connect();
    await next.query(`listen ${channel}`);
    if (closed) return void (await next.end());
    client = next;
    // Whatever was announced while no one listened.
    onNotify();
  };
  await connect();
  return async () => {
    closed = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
