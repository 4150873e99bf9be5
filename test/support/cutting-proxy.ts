/**
 * A TCP proxy for tests of interrupted transfers: it forwards connections to a target, counts the bytes
 * clients send through it, and can cut every open connection once the count passes given points, or flip a
 * byte of the stream at a given count (a transfer damaged on the way).
 */
import net from 'node:net';

export interface CuttingProxy {
  readonly port: number;
  readonly url: string;
  /** Bytes clients sent so far, on connections opened since the last `reset`. */
  readonly sent: number;
  /** How many times connections were cut. */
  readonly cuts: number;
  /** Where the proxy forwards to (set once the target listens). */
  target: { host: string; port: number } | undefined;
  /** Cut all connections when the count of bytes sent passes each of these (counted from now). */
  cutAt(points: number[]): void;
  /** Flip one byte at this count of bytes sent (counted from now). */
  corruptAt(point: number): void;
  /**
   * Starts counting again from zero, and from now on counts only connections opened after this call: a
   * killed client's socket can still deliver what its kernel had buffered, and those bytes are not the next
   * client's. Older connections are still forwarded.
   */
  reset(): void;
  close(): Promise<void>;
}

export async function startCuttingProxy(): Promise<CuttingProxy> {
  const sockets = new Set<net.Socket>();
  let sent = 0;
  let cuts = 0;
  let cutPoints: number[] = [];
  let corruptPoint: number | undefined;
  let generation = 0;
  const server = net.createServer((client) => {
    const born = generation;
    const t = proxy.target;
    if (!t) return client.destroy();
    const upstream = net.connect(t.port, t.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (born !== generation) {
        if (!upstream.write(chunk)) {
          client.pause();
          upstream.once('drain', () => client.resume());
        }
        return;
      }
      const before = sent;
      sent += chunk.length;
      if (corruptPoint !== undefined && before <= corruptPoint && corruptPoint < sent) {
        chunk = Buffer.from(chunk);
        chunk[corruptPoint - before] ^= 0xff;
        corruptPoint = undefined;
      }
      if (cutPoints.length > 0 && sent >= cutPoints[0]) {
        while (cutPoints.length > 0 && sent >= cutPoints[0]) cutPoints.shift();
        cuts++;
        for (const s of [...sockets]) s.destroy();
        sockets.clear();
        return;
      }
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const proxy: CuttingProxy = {
    port,
    url: `http://127.0.0.1:${port}`,
    get sent() {
      return sent;
    },
    get cuts() {
      return cuts;
    },
    target: undefined,
    cutAt(points) {
      cutPoints = points.map((p) => sent + p).sort((a, b) => a - b);
    },
    corruptAt(point) {
      corruptPoint = sent + point;
    },
    reset() {
      generation++;
      sent = 0;
      cuts = 0;
      cutPoints = [];
      corruptPoint = undefined;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
