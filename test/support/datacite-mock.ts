/**
 * A local server speaking DataCite's REST API (https://support.datacite.org/reference/dois-2): HTTP Basic,
 * JSON:API bodies, `POST /dois` to create and `PUT /dois/:doi` to update, and the states a DOI moves through by
 * `attributes.event`: none makes a draft, `register` a registered DOI, `publish` a findable one, `hide` takes a
 * findable one back to registered. DOI names are compared without regard to case, as the DOI system compares
 * them (DOI Handbook 2.4). `hold()` keeps the next call waiting until released, so a test can act in between.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type DoiState = 'draft' | 'registered' | 'findable';

export interface DataciteCall {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
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
  find(doi: string): HeldDoi | undefined;
  hold(): Gate;
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
  const expected = `Basic ${Buffer.from(`${credentials.repositoryId}:${credentials.password}`).toString('base64')}`;
  let held: { arrived: () => void; released: Promise<void> } | undefined;
  const server = createServer(async (req, res) => {
    const text = await read(req);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/vnd.api+json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== expected) return send(401, { errors: [{ status: '401', title: 'Bad credentials.' }] });
    if (req.headers['content-type'] !== 'application/vnd.api+json') return send(415, { errors: [{ title: 'Unsupported media type' }] });
    const body = JSON.parse(text);
    const gate = held;
    held = undefined;
    if (gate) {
      gate.arrived();
      await gate.released;
    }
    calls.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, contentType: req.headers['content-type'], body });
    const { event, ...attrs } = body?.data?.attributes ?? {};
    const problems = ['doi', 'titles', 'creators', 'publisher', 'publicationYear', 'url'].filter((k) => attrs[k] === undefined || (Array.isArray(attrs[k]) && attrs[k].length === 0));
    if (body?.data?.type !== 'dois' || attrs.types?.resourceTypeGeneral !== 'Dataset') problems.push('types');
    if (event !== undefined && !(event in transitions)) problems.push('event');
    if (problems.length) return send(422, { errors: problems.map((p) => ({ source: p, title: "can't be blank" })) });
    if (req.method === 'POST' && req.url === '/dois') {
      const name = String(attrs.doi).toUpperCase();
      if (dois.has(name)) return send(422, { errors: [{ source: 'doi', title: 'This DOI has already been taken' }] });
      const state: DoiState = event === 'publish' ? 'findable' : event === 'register' ? 'registered' : 'draft';
      dois.set(name, { doi: attrs.doi, state, attributes: attrs });
      return send(201, { data: { id: attrs.doi, type: 'dois', attributes: { ...attrs, state } } });
    }
    const m = /^\/dois\/(.+)$/.exec(req.url!);
    if (req.method === 'PUT' && m) {
      const current = dois.get(decodeURIComponent(m[1]).toUpperCase());
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
    find: (doi) => dois.get(doi.toUpperCase()),
    hold() {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      held = { arrived, released };
      return { arrived: arrivedP, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
