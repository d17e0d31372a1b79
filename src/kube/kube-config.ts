// Where the API server is and how the driver proves who it is: read from the pod's service account or from a kubeconfig file.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { BearerToken } from './bearer-token.js';

/** The service account files kubelet mounts into every pod that has one. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What a request needs to reach the API server and be let in. */
export interface KubeCredentials {
  /** The API server's base URL (http: or https:), without a trailing slash. */
  server: string;
  /** CA certificates (PEM) the server's certificate must chain to; the system's when absent. */
  ca?: Buffer;
  /** insecure-skip-tls-verify: the server's certificate is not checked at all. */
  insecureSkipTlsVerify: boolean;
  /** The name the server's certificate must carry, when not the URL's host (tls-server-name). */
  tlsServerName?: string;
  /** Client certificate and key (PEM), for users that authenticate by certificate. */
  cert?: Buffer;
  key?: Buffer;
  /** A bearer token, fixed or read from a file (and read again as the file is rotated). */
  token?: BearerToken;
  basic?: { username: string; password: string };
}

/** What the driver can take from a kubeconfig's user; named in the refusal of anything else. */
const SUPPORTED_USERS = 'token, tokenFile, client-certificate(-data) with client-key(-data), username/password, or no credentials';

/**
 * The pod's own service account: the API server's in-cluster address from the environment
 * kubelet sets, its CA and the (rotated) token from the mounted files.
 */
export function inClusterCredentials(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): KubeCredentials {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod');
  const tokenFile = path.join(dir, 'token');
  const token = BearerToken.fromFile(tokenFile);
  // Read once here so a pod without a service account token fails at start, not on each request.
  token.value();
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca: readFileSync(path.join(dir, 'ca.crt')),
    insecureSkipTlsVerify: false,
    token,
  };
}

/**
 * The YAML parser, loaded when a kubeconfig is read: its 72 modules are a quarter of what a
 * driver would otherwise load at start, and neither a driver without API access nor one with the
 * pod's service account reads any YAML.
 */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yaml.parse(text);
}

/** The current context's cluster and user of a kubeconfig file. */
export function kubeconfigCredentials(file: string): KubeCredentials {
  const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
  const config = record(doc, 'the file');
  const contextName = optionalString(config, 'current-context', 'the file');
  if (!contextName) throw new Error('no current-context');
  const context = named(config, 'contexts', 'context', contextName);
  const clusterName = optionalString(context, 'cluster', `context ${contextName}`);
  if (!clusterName) throw new Error(`context ${contextName} names no cluster`);
  const cluster = named(config, 'clusters', 'cluster', clusterName);
  const userName = optionalString(context, 'user', `context ${contextName}`);
  const user = userName ? named(config, 'users', 'user', userName) : {};
  // Relative file names in a kubeconfig are relative to the file, as kubectl reads them.
  const dir = path.dirname(file);
  const where = `cluster ${clusterName}`;
  const server = optionalString(cluster, 'server', where);
  if (!server) throw new Error(`${where} has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`${where}: server ${server} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${where}: server ${server} is not an http(s) URL`);
  if (cluster['proxy-url'] !== undefined) throw new Error(`${where}: proxy-url is not supported`);
  const creds: KubeCredentials = {
    server: server.replace(/\/+$/, ''),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
  };
  const ca = fileOrData(cluster, 'certificate-authority', dir, where);
  if (ca) creds.ca = ca;
  const tlsServerName = optionalString(cluster, 'tls-server-name', where);
  if (tlsServerName) creds.tlsServerName = tlsServerName;

  const who = `user ${userName ?? ''}`;
  for (const refused of ['exec', 'auth-provider'] as const) {
    if (user[refused] !== undefined) throw new Error(`${who} authenticates with ${refused}, which the driver does not run; supported: ${SUPPORTED_USERS} (docs/api-access.md)`);
  }
  const cert = fileOrData(user, 'client-certificate', dir, who);
  const key = fileOrData(user, 'client-key', dir, who);
  if ((cert === undefined) !== (key === undefined)) throw new Error(`${who} has a client certificate without its key, or a key without its certificate`);
  if (cert && key) {
    creds.cert = cert;
    creds.key = key;
  }
  const token = optionalString(user, 'token', who);
  const tokenFile = optionalString(user, 'tokenFile', who);
  if (token) creds.token = BearerToken.fixed(token);
  else if (tokenFile) {
    creds.token = BearerToken.fromFile(path.resolve(dir, tokenFile));
    creds.token.value();
  }
  const username = optionalString(user, 'username', who);
  const password = optionalString(user, 'password', who);
  if (username !== undefined || password !== undefined) {
    if (!username || password === undefined) throw new Error(`${who} has a username without a password, or a password without a username`);
    creds.basic = { username, password };
  }
  return creds;
}

function record(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${where} is not a mapping`);
  return v as Record<string, unknown>;
}

function optionalString(o: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`${where}: ${key} is not a string`);
  return v;
}

/** The `field` mapping of the entry named `name` in the list `list` (contexts, clusters, users). */
function named(config: Record<string, unknown>, list: string, field: string, name: string): Record<string, unknown> {
  const entries = config[list] ?? [];
  if (!Array.isArray(entries)) throw new Error(`${list} is not a list`);
  for (const e of entries) {
    const entry = record(e, `an entry of ${list}`);
    if (entry.name === name) return entry[field] === undefined || entry[field] === null ? {} : record(entry[field], `${field} ${name}`);
  }
  throw new Error(`no ${field} named ${name} in ${list}`);
}

/** The PEM of `key`-data (base64) or of the file `key` names. */
function fileOrData(o: Record<string, unknown>, key: string, dir: string, where: string): Buffer | undefined {
  const data = optionalString(o, `${key}-data`, where);
  if (data) return Buffer.from(data, 'base64');
  const file = optionalString(o, key, where);
  if (!file) return undefined;
  try {
    return readFileSync(path.resolve(dir, file));
  } catch (err) {
    throw new Error(`${where}: cannot read ${key} ${file}: ${(err as Error).message}`);
  }
}
