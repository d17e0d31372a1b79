// One API request over node's own HTTP(S): credentials, the driver's User-Agent, JSON in and out, cancellable, and a bound on what an answer may hold.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as http from 'node:http';
import * as https from 'node:https';
import { shapeAnswer } from './answer-shape.js';
import { KubeApiError, KubeResponseTooLargeError } from './kube-errors.js';
import type { KubeCredentials } from './kube-config.js';

/**
 * The abort signal of the bounded() call a request is made in: the transport hands it to the
 * HTTP request, so a request past its bound is cancelled and its connection closed, not
 * left open to an API server that never answers (which also kept a stopping driver alive).
 */
export const requestSignal = new AsyncLocalStorage<AbortSignal>();

/**
 * The largest answer kept. The driver's biggest reads are whole lists (all PersistentVolumes
 * of a cluster on a node loss): at some 3 KiB a PV, 64 MiB is over 20,000 of them, far past
 * what one node-local driver's cluster holds, while a runaway answer cannot take the node's
 * memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface ApiRequest {
  method: HttpMethod;
  /** The path below the server's URL, its segments already encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** The body's content type (a patch's kind); JSON otherwise. */
  contentType?: string;
}

/** One event of a watch stream: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, and its object (a Status for ERROR). */
export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export interface TransportOptions {
  userAgent: string;
  maxResponseBytes?: number;
}

export class HttpTransport {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly maxBytes: number;

  constructor(private readonly creds: KubeCredentials, private readonly options: TransportOptions) {
    this.base = new URL(creds.server);
    this.maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    // Keep-alive: the driver's requests come in bursts (a node loss, a pod's claims), and one
    // connection reused saves a TLS handshake each. Idle sockets do not keep the process up.
    const common = { keepAlive: true, maxSockets: 16, timeout: 60_000 };
    this.agent = this.base.protocol === 'https:' ? new https.Agent({ ...common, ...this.tlsOptions() }) : new http.Agent(common);
  }

  /** Sends the request; resolves with the parsed answer, or rejects with KubeApiError for a non-2xx status. */
  async request<T>(req: ApiRequest): Promise<T> {
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const first = await this.send(req, body);
    // A 401 with a token from a file that has changed since: the token was rotated, go again once.
    const answer = first.status === 401 && this.creds.token?.refreshAfterRejection() ? await this.send(req, body) : first;
    const what = `${req.method} ${req.path}`;
    if (answer.status < 200 || answer.status > 299) throw new KubeApiError(answer.status, answer.text, what);
    if (answer.text === '') return undefined as T;
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.text);
    } catch {
      throw new Error(`${what}: the API server answered ${answer.status} with a body that is not JSON`);
    }
    shapeAnswer(parsed);
    return parsed as T;
  }

  /**
   * A watch (`watch=true` in the query): calls `onEvent` with each event of the stream as it
   * arrives, and resolves when the server ends the stream (at the request's timeoutSeconds).
   * Rejects with KubeApiError for a non-2xx status, or when one event is larger than an answer
   * may be. Cancelled by the requestSignal it runs under, like any request.
   */
  async watch(req: ApiRequest, onEvent: (event: WatchEvent) => void): Promise<void> {
    const what = `WATCH ${req.path}`;
    let lines = '';
    const failed = await this.sendStreaming(req, (chunk, stop) => {
      lines += chunk;
      if (lines.length > this.maxBytes) {
        stop(new KubeResponseTooLargeError(`${what}: an event larger than ${this.maxBytes} bytes, more than the driver keeps; the watch is dropped`));
        return;
      }
      let nl: number;
      while ((nl = lines.indexOf('\n')) >= 0) {
        const line = lines.slice(0, nl).trim();
        lines = lines.slice(nl + 1);
        if (line === '') continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          stop(new Error(`${what}: the API server sent an event that is not JSON`));
          return;
        }
        shapeAnswer(parsed);
        const e = parsed as { type?: unknown; object?: unknown };
        if (typeof e.type !== 'string' || typeof e.object !== 'object' || e.object === null) {
          stop(new Error(`${what}: the API server sent an event without a type or an object`));
          return;
        }
        onEvent({ type: e.type, object: e.object as Record<string, unknown> });
      }
    });
    if (failed !== undefined) throw new KubeApiError(failed.status, failed.text, what);
  }

  /** Closes every connection, idle or in use (the tests end their transports with it). */
  close(): void {
    this.agent.destroy();
  }

  /** The URL and headers of a request, credentials included. */
  private prepare(req: ApiRequest, body: Buffer | undefined): { url: URL; headers: http.OutgoingHttpHeaders } {
    const url = new URL(this.base.href.replace(/\/$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: http.OutgoingHttpHeaders = { 'User-Agent': this.options.userAgent, Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const token = this.creds.token?.value();
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (this.creds.basic) headers.Authorization = `Basic ${Buffer.from(`${this.creds.basic.username}:${this.creds.basic.password}`).toString('base64')}`;
    return { url, headers };
  }

  /**
   * A GET whose 2xx body is handed over chunk by chunk as it arrives (a watch). Resolves
   * undefined when the body ends, or the status and body of a non-2xx answer; rejects when the
   * consumer stops it with an error, or on a transport error or cancellation.
   */
  private sendStreaming(req: ApiRequest, onChunk: (text: string, stop: (err: Error) => void) => void): Promise<{ status: number; text: string } | undefined> {
    const signal = requestSignal.getStore();
    const { url, headers } = this.prepare(req, undefined);
    const what = `WATCH ${req.path}`;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(new Error(`${what}: cancelled`));
        return;
      }
      const send = url.protocol === 'https:' ? https.request : http.request;
      // No agent: a watch holds its connection for minutes, which must not take one of the
      // pooled sockets the driver's short requests share.
      const r = send(url, { method: 'GET', headers, ...(signal ? { signal } : {}), ...this.tlsOptions() }, (res) => {
        const status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        if (status < 200 || status > 299) {
          let text = '';
          res.on('data', (c: string) => { if (text.length < 65_536) text += c; });
          res.on('end', () => resolve({ status, text }));
          res.on('error', reject);
          return;
        }
        let stopped = false;
        const stop = (err: Error): void => {
          stopped = true;
          reject(err);
          r.destroy();
        };
        res.on('data', (c: string) => { if (!stopped) onChunk(c, stop); });
        res.on('end', () => { if (!stopped) resolve(undefined); });
        res.on('error', (err) => { if (!stopped) reject(err); });
      });
      r.on('error', (err) => reject(err.name === 'AbortError' ? new Error(`${what}: cancelled`) : err));
      r.end();
    });
  }

  /** The TLS settings: the pooled agent's, and a watch's, which goes without the agent. */
  private tlsOptions(): Pick<https.AgentOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'> {
    if (this.base.protocol !== 'https:') return {};
    const creds = this.creds;
    return {
      ...(creds.ca ? { ca: creds.ca } : {}),
      ...(creds.cert && creds.key ? { cert: creds.cert, key: creds.key } : {}),
      ...(creds.tlsServerName ? { servername: creds.tlsServerName } : {}),
      rejectUnauthorized: !creds.insecureSkipTlsVerify,
    };
  }

  private send(req: ApiRequest, body: Buffer | undefined): Promise<{ status: number; text: string }> {
    const signal = requestSignal.getStore();
    const { url, headers } = this.prepare(req, body);
    const what = `${req.method} ${req.path}`;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(new Error(`${what}: cancelled`));
        return;
      }
      const send = url.protocol === 'https:' ? https.request : http.request;
      const r = send(url, { method: req.method, headers, agent: this.agent, ...(signal ? { signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > this.maxBytes) {
            // Settled first: destroying the request then closes the connection, rest unread.
            reject(new KubeResponseTooLargeError(`${what}: the answer is larger than ${this.maxBytes} bytes, more than the driver keeps; not read`));
            r.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      r.on('error', (err) => reject(err.name === 'AbortError' ? new Error(`${what}: cancelled`) : err));
      r.end(body);
    });
  }
}
