// The bench's Kubernetes API over HTTP: routing, content negotiation and Status errors on node:http, loopback only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { ObjectStore } from '../api/object-store.js';
import type { EventLog } from '../api/event-log.js';
import type { VirtualClock } from '../clock/virtual-clock.js';
import { resourceFor, type ResourceType } from '../api/resources.js';
import { RunOverError } from '../runtime/external-writes.js';
import { contentTypeOf, negotiate, parseAccept } from './accept.js';
import { aggregatedDiscovery, apiGroupDoc, apiGroupList, apiResourceList, apiVersions, BENCH_VERSION } from './discovery.js';
import { openApiV3For, openApiV3Index } from './openapi.js';
import { openApiV2Protobuf, OPENAPI_V2_PROTOBUF_TYPE } from './openapi-v2.js';
import { parseRequestPath, verbOf, type ResourcePath } from './request-info.js';
import { getObject, listPage, parseSelection, selects } from './reads.js';
import { badRequest, methodNotAllowed, notAcceptable, notFound, StatusError, unsupportedMediaType } from './status.js';
import { forward, parsePodProxyPath, type PodProxyPath } from './pod-proxy.js';
import { parse as parseYaml } from 'yaml';
import { toTable, type IncludeObject } from './tables/table.js';
import { getScale, hasScale, writeScale } from './scale.js';
import { serveWatch } from './watch.js';
import { WatchHistory } from './watch-history.js';
import { ServedEvents } from './served-events.js';
import { createObject, deleteCollection, deleteObject, deleteOptions, patchObject, updateObject, type WriteBackend, type WriteTarget } from './writes.js';
import { toJson, toJsonText, typed } from './wire.js';
import { fieldValidationOf, warningHeader } from './field-validation.js';
import { decodeObject, encodeObject, hasProtobuf, messageFor, PROTOBUF_TYPE } from './protobuf/envelope.js';
import { PROTOBUF_WATCH_TYPE, watchFrame } from './protobuf/watch-frame.js';
import { ProtobufError } from './protobuf/codec.js';
import { isVerb, type RequestCounts } from '../api/request-counts.js';

/** What the server needs of a running cluster (Cluster has all of it). */
export interface ApiBackend extends WriteBackend {
  store: ObjectStore;
  events: EventLog;
  clock: VirtualClock;
  /** The run's request counts, which count clients of this server beside the modelled components. */
  requests?: RequestCounts;
  /** The loopback port of the process standing for a pod's port (pods/proxy), or undefined where none does. */
  podPort?(namespace: string, pod: string, port: number): number | undefined;
}

/**
 * Told about every API request: the hook where request counting plugs in (client = the
 * User-Agent's first token, verb as the authorizer names it, resource plural, subresource).
 */
export type RequestCounter = (client: string, verb: string, resource: string, subresource?: string) => void;

export interface ApiServerOptions {
  host: string;
  port: number;
  onRequest?: RequestCounter;
  /** Store changes kept for resuming watches (default DEFAULT_HISTORY). */
  historyLimit?: number;
}

/** A bind address that is not loopback: the API has no authentication, so it never listens beyond this machine. */
export class NotLoopbackError extends Error {}

/** Parses `--api HOST:PORT` (port 0 = any free one); only loopback hosts are accepted. */
export function parseApiAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(text.trim());
  if (m === null) throw new NotLoopbackError(`--api wants HOST:PORT on a loopback address, e.g. 127.0.0.1:0 (port 0 = pick a free one), not ${JSON.stringify(text)}`);
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (port > 65535) throw new NotLoopbackError(`--api: port ${port} is out of range`);
  const loopback = host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
  if (!loopback) throw new NotLoopbackError(`--api ${text}: the bench's API has no authentication and listens on loopback only (127.0.0.1, ::1 or localhost), not on ${host}`);
  return { host: host === 'localhost' ? '127.0.0.1' : host, port };
}

const MAX_BODY = 16 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new StatusError(413, 'BadRequest', 'request entity too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function mediaOf(contentType: string | undefined): string {
  return (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

/** An enveloped protobuf body as JSON; a body that does not decode is a 400, as upstream answers it. */
function protobufBody(body: Buffer): unknown {
  try {
    return decodeObject(body);
  } catch (err) {
    if (err instanceof ProtobufError) throw badRequest(`the protobuf request body could not be decoded: ${err.message}`);
    throw err;
  }
}

/**
 * A create or update body: JSON, YAML or protobuf (what Go clients of built-in kinds send),
 * as kube-apiserver takes them. Anything else is refused as the media type it is, not as broken JSON.
 */
function parseJsonBody(body: Buffer, contentType: string | undefined): unknown {
  const media = mediaOf(contentType);
  if (media === PROTOBUF_TYPE) return protobufBody(body);
  const text = body.toString('utf8');
  if (media === 'application/yaml') {
    try {
      return parseYaml(text);
    } catch (err) {
      throw badRequest(`the request body is not valid YAML: ${(err as Error).message}`);
    }
  }
  if (media !== 'application/json' && media !== '' && media !== '*/*') {
    throw unsupportedMediaType(`the body's media type "${media}" is not supported: the bench's API takes application/json, application/yaml or ${PROTOBUF_TYPE}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The User-Agent's first token without its version: "kubectl" for "kubectl/v1.32.4 (linux/amd64) ...". */
export function clientOf(userAgent: string | undefined): string {
  const first = (userAgent ?? '').trim().split(/\s+/)[0] ?? '';
  return first.split('/')[0] || 'unknown';
}

const NOT_FOUND = new StatusError(404, 'NotFound', 'the server could not find the requested resource');

/**
 * Listens before any run starts (so a taken port fails before a driver starts) and serves
 * whichever run is attached; one server and one kubeconfig for all runs of a command.
 */
export class ApiServer {
  private server: Server | undefined;
  private run: { b: ApiBackend; history: WatchHistory; events: ServedEvents } | undefined;
  private readonly watches = new Set<() => void>();
  private address = '';

  constructor(private readonly opts: ApiServerOptions) {}

  /** Serves this cluster from now on; watches of the previous one end (their resourceVersions mean nothing here). */
  attach(b: ApiBackend): void {
    for (const stop of [...this.watches]) stop();
    // Before any object exists: the history must hold every change a watch may resume from.
    const history = new WatchHistory(b.store, this.opts.historyLimit);
    // The API's now is the wall clock's now from here (Runtime.hold re-sets it when a hold starts).
    b.clock.alignDisplayToWall();
    this.run = { b, history, events: new ServedEvents(b.events, b.store, history) };
  }

  private get b(): ApiBackend {
    if (this.run === undefined) throw new StatusError(503, 'ServiceUnavailable', 'no bench run is attached yet');
    return this.run.b;
  }

  private get history(): WatchHistory {
    if (this.run === undefined) throw new StatusError(503, 'ServiceUnavailable', 'no bench run is attached yet');
    return this.run.history;
  }

  /** What every time the API shows is moved by; nothing is shifted before a run is attached. */
  private get shiftMs(): number {
    return this.run?.b.clock.displayShiftMs ?? 0;
  }

  /** Listens; resolves with the URL clients use. */
  async start(): Promise<string> {
    const server = createServer((req, res) => { void this.handle(req, res); });
    // Node's default closes an idle connection after 5 s, racing a client that reuses it at that
    // moment: on a loaded machine a request then fails with "other side closed" (fetch failed). 90 s
    // is how long Go's default HTTP transport keeps an idle connection; close() ends idle ones anyway.
    server.keepAliveTimeout = 90_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => { server.off('error', reject); resolve(); });
    });
    const a = server.address();
    if (a === null || typeof a === 'string') throw new Error('the API server has no TCP address');
    this.address = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
    return `http://${this.address}`;
  }

  /** Ends open watches and stops listening. */
  async close(): Promise<void> {
    for (const stop of [...this.watches]) stop();
    const s = this.server;
    this.server = undefined;
    if (s === undefined) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /**
   * `proto`: the client asked for protobuf; bodies with a protobuf form (built-in kinds, Status) are sent so.
   * `warnings` become Warning headers (kubectl prints each as "Warning: ...").
   */
  private send(res: ServerResponse, code: number, body: unknown, contentType = 'application/json', proto = false, warnings: string[] = []): void {
    if (res.headersSent) return;
    const warning = warnings.length > 0 ? { Warning: warnings.map(warningHeader) } : {};
    if (proto) {
      const json = toJson(body, this.shiftMs);
      if (hasProtobuf(json)) {
        const bytes = encodeObject(json);
        res.writeHead(code, { 'Content-Type': PROTOBUF_TYPE, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private', ...warning });
        res.end(bytes);
        return;
      }
    }
    const text = toJsonText(body, this.shiftMs);
    res.writeHead(code, {
      'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private', ...warning,
    });
    res.end(text);
  }

  private sendError(res: ServerResponse, err: unknown, proto = false): void {
    let e: StatusError;
    if (err instanceof StatusError) e = err;
    else if (err instanceof RunOverError) e = new StatusError(503, 'ServiceUnavailable', `the bench run is over: ${err.message}`);
    else e = new StatusError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    this.send(res, e.code, e.body(), 'application/json', proto);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Errors too go back as protobuf to a client that asks for it first, as upstream sends its Status.
    let proto = false;
    try {
      const url = new URL(req.url ?? '/', 'http://bench');
      const accept = parseAccept(req.headers.accept);
      const method = req.method ?? 'GET';
      const client = clientOf(req.headers['user-agent']);
      const proxy = parsePodProxyPath(url.pathname);
      if (proxy !== undefined) {
        this.opts.onRequest?.(client, 'get', 'pods', 'proxy');
        this.run?.b.requests?.record(`external/${client}`, 'get', 'pods', 'proxy');
        await this.podProxy(req, res, proxy, url.search);
        return;
      }
      const path = parseRequestPath(url.pathname);
      if (path.type === 'resource') {
        const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
        // API request counting hooks in here: one call per resource request.
        const verb = verbOf(method, path, watch);
        this.opts.onRequest?.(client, verb, path.plural, path.subresource);
        // Named apart from the modelled components (the scenario's own "kubectl" among them).
        if (isVerb(verb)) this.run?.b.requests?.record(`external/${client}`, verb, path.plural, path.subresource);
        // Not for custom resources, whose successful answers are JSON too.
        const known = resourceFor(path.group, path.version, path.plural);
        proto = negotiate(accept, { protobuf: known === undefined || messageFor(known.apiVersion, known.kind) !== undefined }) === 'protobuf';
        await this.resource(req, res, path, url.searchParams, accept, method, client, watch);
        return;
      }
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
      switch (path.type) {
        case 'version':
          this.send(res, 200, BENCH_VERSION);
          return;
        case 'health':
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('ok');
          return;
        case 'openapi': {
          // v3 says the server validates (so kubectl apply needs no schema); v2, for kubectl before 1.27, says there is nothing to validate.
          if (path.rest === 'v2') {
            const body = openApiV2Protobuf();
            res.writeHead(200, { 'Content-Type': OPENAPI_V2_PROTOBUF_TYPE, 'Content-Length': body.length });
            res.end(body);
            return;
          }
          if (path.rest === 'v3') {
            this.send(res, 200, openApiV3Index());
            return;
          }
          const doc = path.rest.startsWith('v3/') ? openApiV3For(path.rest.slice(3)) : undefined;
          if (doc === undefined) throw NOT_FOUND;
          this.send(res, 200, doc);
          return;
        }
        case 'legacy-versions':
        case 'groups': {
          const form = negotiate(accept, { discovery: true });
          if (form === 'discovery-v2' || form === 'discovery-v2beta1') {
            this.send(res, 200, aggregatedDiscovery(path.type === 'legacy-versions', form === 'discovery-v2' ? 'apidiscovery.k8s.io/v2' : 'apidiscovery.k8s.io/v2beta1'), contentTypeOf(form));
            return;
          }
          if (form === undefined) throw notAcceptable('only JSON is served');
          this.send(res, 200, path.type === 'legacy-versions' ? apiVersions(this.address) : apiGroupList());
          return;
        }
        case 'group': {
          const doc = apiGroupDoc(path.group);
          if (doc === undefined) throw NOT_FOUND;
          this.send(res, 200, doc);
          return;
        }
        case 'group-version': {
          const doc = apiResourceList(path.group, path.version);
          if (doc === undefined) throw NOT_FOUND;
          this.send(res, 200, doc);
          return;
        }
        default:
          throw NOT_FOUND;
      }
    } catch (err) {
      this.sendError(res, err, proto);
    }
  }

  /** pods/proxy: the pod must exist; its port (the first declared one when none is named) must be one a bench process stands behind. */
  private async podProxy(req: IncomingMessage, res: ServerResponse, p: PodProxyPath, query: string): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed('the bench\'s pod proxy serves GET and HEAD');
    const r = resourceFor('', 'v1', 'pods')!;
    const pod = this.b.store.get('Pod', p.pod, p.namespace);
    if (pod === undefined) throw notFound(r, p.pod);
    const declared = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? []);
    const port = p.port === '' ? declared[0]?.containerPort : /^\d+$/.test(p.port) ? Number(p.port) : undefined;
    // Upstream dials the pod's IP on the port as written, so a port name fails to dial there too.
    if (port === undefined) throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${p.port === '' ? `pod ${p.pod} declares no port` : `"${p.port}" is not a port number`}`);
    const target = this.b.podPort?.(p.namespace, p.pod, port);
    if (target === undefined) {
      throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: nothing answers on port ${port} of pod ${p.namespace}/${p.pod} (in the bench only a driver's DaemonSet pod answers, on its metrics port, while its driver runs)`);
    }
    await forward(req, res, target, p.path, query);
  }

  private resourceType(p: ResourcePath): ResourceType {
    const r = resourceFor(p.group, p.version, p.plural);
    if (r === undefined) throw NOT_FOUND;
    if (!r.namespaced && p.namespace !== undefined) throw NOT_FOUND;
    if (p.subresource !== undefined && !(p.subresource === 'status' && r.statusSubresource) && !(p.subresource === 'scale' && hasScale(r))) throw NOT_FOUND;
    return r;
  }

  private async resource(req: IncomingMessage, res: ServerResponse, p: ResourcePath, q: URLSearchParams, accept: ReturnType<typeof parseAccept>, method: string, client: string, watch: boolean): Promise<void> {
    const r = this.resourceType(p);
    const namespace = r.namespaced ? p.namespace : undefined;
    const dryRun = q.getAll('dryRun').includes('All');
    const writing = method === 'POST' || method === 'PUT' || method === 'PATCH';
    const target: WriteTarget = {
      r, namespace, name: p.name, subresource: p.subresource, client, userAgent: req.headers['user-agent'] ?? '', dryRun, displayShiftMs: this.shiftMs,
      fieldValidation: writing ? fieldValidationOf(q) : 'Warn', warnings: [],
    };
    // Built-in kinds have a protobuf form; custom resources are JSON only, as for a real server.
    const builtIn = messageFor(r.apiVersion, r.kind) !== undefined;
    const proto = builtIn && negotiate(accept, { protobuf: true, table: true }) === 'protobuf';
    const reply = (code: number, body: unknown, contentType?: string): void => this.send(res, code, body, contentType, proto, target.warnings);
    if (p.subresource === 'scale') {
      await this.scale(req, target, method, reply);
      return;
    }
    switch (method) {
      case 'GET': {
        const form = negotiate(accept, { table: true, protobuf: builtIn });
        if (form === undefined) throw notAcceptable('only JSON and the meta.k8s.io Table form are served');
        const asTable = form === 'table';
        const includeObject = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
        if (!['None', 'Metadata', 'Object'].includes(includeObject)) throw badRequest(`includeObject must be None, Metadata or Object`);
        // The printers read wire JSON (timestamps as text), what a real server prints from.
        const table = (objects: ReturnType<typeof typed>[], rv: string): Record<string, unknown> => {
          const shift = this.shiftMs;
          return toTable(r.kind, objects.map((o) => toJson(o, shift) as Record<string, unknown>), { now: new Date(this.b.clock.date().getTime() + shift), includeObject, resourceVersion: rv });
        };
        const selection = parseSelection(r, q, namespace);
        if (watch) {
          if (p.name !== undefined) {
            // A watch on /NAME is a watch of the collection for that name.
            selection.fields.push({ field: 'metadata.name', equal: true, value: p.name });
          }
          let stop: () => void = () => {};
          stop = serveWatch(res, {
            store: this.b.store, history: this.history, resource: r, selection, query: q, events: this.run?.events,
            contentType: form === 'protobuf' ? PROTOBUF_WATCH_TYPE : contentTypeOf(form),
            ...(form === 'protobuf' ? { frame: (type: string, object: unknown) => watchFrame(type, toJson(object, this.shiftMs)) } : {}),
            encode: (o, first) => {
              if (!asTable) return o;
              const t = table([o], o.metadata?.resourceVersion ?? '');
              // Column definitions travel with the first event only, as upstream's watch encoder sends them.
              return first ? t : { ...t, columnDefinitions: [] };
            },
            bookmarksAllowed: !asTable,
            onEnd: () => this.watches.delete(stop),
            displayShiftMs: () => this.shiftMs,
          });
          this.watches.add(stop);
          return;
        }
        if (p.name !== undefined) {
          const o = typed(r, getObject(this.b.store, r, p.name, namespace, this.run?.events));
          reply(200, asTable ? table([o], o.metadata?.resourceVersion ?? '') : o, contentTypeOf(form));
          return;
        }
        const page = listPage(this.b.store, this.history, r, selection, q, this.run?.events);
        const items = page.items.map((o) => typed(r, o));
        const metadata = { resourceVersion: page.resourceVersion, ...(page.continue ? { continue: page.continue, remainingItemCount: page.remainingItemCount } : {}) };
        if (asTable) {
          const t = table(items, page.resourceVersion);
          reply(200, { ...t, metadata: { ...(t.metadata as object), ...metadata } }, contentTypeOf(form));
        } else {
          reply(200, { kind: `${r.kind}List`, apiVersion: r.apiVersion, metadata, items });
        }
        return;
      }
      case 'POST': {
        if (p.name !== undefined) throw methodNotAllowed();
        const created = await createObject(this.b, target, parseJsonBody(await readBody(req), req.headers['content-type']));
        reply(dryRun ? 200 : 201, created);
        return;
      }
      case 'PUT': {
        if (p.name === undefined) throw methodNotAllowed();
        reply(200, await updateObject(this.b, target, parseJsonBody(await readBody(req), req.headers['content-type'])));
        return;
      }
      case 'PATCH': {
        if (p.name === undefined) throw methodNotAllowed();
        reply(200, await patchObject(this.b, target, req.headers['content-type'] ?? '', (await readBody(req)).toString('utf8')));
        return;
      }
      case 'DELETE': {
        const raw = await readBody(req);
        // Go clients send DeleteOptions in their own content type.
        const opts = deleteOptions(mediaOf(req.headers['content-type']) === PROTOBUF_TYPE && raw.length > 0 ? JSON.stringify(protobufBody(raw)) : raw.toString('utf8'), q);
        if (p.name === undefined) {
          if (r.kind === 'Namespace') throw methodNotAllowed();
          const selection = parseSelection(r, q, namespace);
          const out = await deleteCollection(this.b, target, opts, (o) => selects(r, selection, o));
          reply(out.code, out.body);
          return;
        }
        const out = await deleteObject(this.b, target, opts);
        reply(out.code, out.body);
        return;
      }
      default:
        throw methodNotAllowed();
    }
  }

  private async scale(req: IncomingMessage, t: WriteTarget, method: string, reply: (code: number, body: unknown) => void): Promise<void> {
    if (t.name === undefined) throw NOT_FOUND;
    switch (method) {
      case 'GET':
        reply(200, getScale(this.b, t));
        return;
      case 'PUT':
        reply(200, await writeScale(this.b, t, { put: parseJsonBody(await readBody(req), req.headers['content-type']) }));
        return;
      case 'PATCH':
        reply(200, await writeScale(this.b, t, { patch: (await readBody(req)).toString('utf8'), contentType: (req.headers['content-type'] ?? '').split(';')[0]!.trim() }));
        return;
      default:
        throw methodNotAllowed();
    }
  }
}
