/**
 * A local server speaking DataCite's REST API (https://support.datacite.org/reference/dois-2): HTTP Basic,
 * JSON:API bodies, `POST /dois` to create and `PUT /dois/:doi` to update, and the states a DOI moves through by
 * `attributes.event`: none makes a draft, `register` a registered DOI, `publish` a findable one, `hide` takes a
 * findable one back to registered. `DELETE /dois/:doi` (no body) deletes a draft with 204, answers 404 for a name
 * it does not hold and 405 for a registered or findable DOI, as DataCite's server does; a deleted name is never
 * created again ("the same identifier cannot be reused once deleted",
 * https://support.datacite.org/docs/fabrica-delete-doi: DataCite does not document its answer, so the mock's 422
 * is worded by the mock). DOI names are compared without regard to case, as the DOI system compares them (DOI
 * Handbook 2.4). `hold()` keeps the next call (or the next one it matches) waiting until released, so a test can
 * act in between; `failNext(method)` answers the next call of that method with a 503.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type DoiState = 'draft' | 'registered' | 'findable';

export interface DataciteCall {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
  /** The JSON:API document sent; for a DELETE, which sends none, one naming the DOI of its URL. */
  body: { data: { type: string; id: string; attributes: Record<string, any> } };
}

export interface HeldDoi {
  doi: string;
  state: DoiState;
  attributes: Record<string, any>;
}

export interface Gate {
  /** Resolves when the held call arrived. */
  arrived: Promise<void>;
  release(): void;
}

export interface DataciteMock {
  url: string;
  server: Server;
  /** Every authorized, well-formed call, in the order answered. */
  calls: DataciteCall[];
  /** The DOIs held, by upper-case name. */
  dois: Map<string, HeldDoi>;
  /** The names deleted, upper-case: never created again. */
  deleted: Set<string>;
  find(doi: string): HeldDoi | undefined;
  /** Holds the next call for which `matches` is true (any call when left out). */
  hold(matches?: (call: DataciteCall) => boolean): Gate;
  /** Answers the next call of `method` with a 503, changing nothing. */
  failNext(method: string): void;
  close(): Promise<void>;
}

const transitions: Record<string, Partial<Record<DoiState, DoiState>>> = {
  register: { draft: 'registered' },
  publish: { draft: 'findable', registered: 'findable' },
  hide: { findable: 'registered' },
};

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => resolve(b));
  });
}

export async function startDataciteMock(credentials: { repositoryId: string; password: string }): Promise<DataciteMock> {
  const calls: DataciteCall[] = [];
  const dois = new Map<string, HeldDoi>();
  const deleted = new Set<string>();
  const failing = new Set<string>();
  const expected = `Basic ${Buffer.from(`${credentials.repositoryId}:${credentials.password}`).toString('base64')}`;
  let held: { matches: (call: DataciteCall) => boolean; arrived: () => void; released: Promise<void> } | undefined;
  const server = createServer(async (req, res) => {
    const text = await read(req);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/vnd.api+json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== expected) return send(401, { errors: [{ status: '401', title: 'Bad credentials.' }] });
    const m = /^\/dois\/(.+)$/.exec(req.url!);
    const named = m ? decodeURIComponent(m[1]) : undefined;
    let body;
    if (req.method === 'DELETE') {
      if (text) return send(400, { errors: [{ title: 'A DELETE has no body' }] });
      body = { data: { type: 'dois', id: named ?? '', attributes: { doi: named ?? '' } } };
    } else {
      if (req.headers['content-type'] !== 'application/vnd.api+json') return send(415, { errors: [{ title: 'Unsupported media type' }] });
      body = JSON.parse(text);
    }
    const call: DataciteCall = { method: req.method!, url: req.url!, auth: req.headers.authorization, contentType: req.headers['content-type'], body };
    const gate = held?.matches(call) ? held : undefined;
    if (gate) {
      held = undefined;
      gate.arrived();
      await gate.released;
    }
    if (failing.delete(req.method!)) return send(503, { errors: [{ status: '503', title: 'Service unavailable' }] });
    calls.push(call);
    if (req.method === 'DELETE' && named !== undefined) {
      const current = dois.get(named.toUpperCase());
      if (!current) return send(404, { errors: [{ status: '404', title: "The resource you are looking for doesn't exist." }] });
      if (current.state !== 'draft') return res.writeHead(405, { 'content-type': 'application/vnd.api+json', allow: 'HEAD, GET, POST, PATCH, PUT, OPTIONS' }).end(JSON.stringify({ errors: [{ status: '405', title: 'Method not allowed' }] }));
      dois.delete(named.toUpperCase());
      deleted.add(named.toUpperCase());
      return res.writeHead(204).end();
    }
    const { event, ...attrs } = body?.data?.attributes ?? {};
    const problems = ['doi', 'titles', 'creators', 'publisher', 'publicationYear', 'url'].filter((k) => attrs[k] === undefined || (Array.isArray(attrs[k]) && attrs[k].length === 0));
    if (body?.data?.type !== 'dois' || attrs.types?.resourceTypeGeneral !== 'Dataset') problems.push('types');
    if (event !== undefined && !(event in transitions)) problems.push('event');
    if (problems.length) return send(422, { errors: problems.map((p) => ({ source: p, title: "can't be blank" })) });
    if (req.method === 'POST' && req.url === '/dois') {
      const name = String(attrs.doi).toUpperCase();
      if (dois.has(name)) return send(422, { errors: [{ source: 'doi', title: 'This DOI has already been taken' }] });
      if (deleted.has(name)) return send(422, { errors: [{ source: 'doi', title: 'This DOI was deleted and cannot be reused' }] });
      const state: DoiState = event === 'publish' ? 'findable' : event === 'register' ? 'registered' : 'draft';
      dois.set(name, { doi: attrs.doi, state, attributes: attrs });
      return send(201, { data: { id: attrs.doi, type: 'dois', attributes: { ...attrs, state } } });
    }
    if (req.method === 'PUT' && named !== undefined) {
      const current = dois.get(named.toUpperCase());
      if (!current) return send(404, { errors: [{ status: '404', title: "The resource you are looking for doesn't exist." }] });
      const state = (event && transitions[event][current.state]) ?? current.state;
      Object.assign(current, { state, attributes: { ...current.attributes, ...attrs, doi: current.doi } });
      return send(200, { data: { id: current.doi, type: 'dois', attributes: { ...current.attributes, state } } });
    }
    send(404, { errors: [{ title: 'no route' }] });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    server,
    calls,
    dois,
    deleted,
    find: (doi) => dois.get(doi.toUpperCase()),
    hold(matches = () => true) {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      held = { matches, arrived, released };
      return { arrived: arrivedP, release };
    },
    failNext(method) {
      failing.add(method);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
