// Parses the HOST:PORT strings of --metrics-address, shared by the HTTP endpoint and the probe command.
import { isIP } from 'node:net';

/** A parsed listen address. `host` is undefined for ":PORT", meaning every interface. */
export interface ListenAddress {
  host: string | undefined;
  port: number;
}

const EXAMPLES = 'e.g. 127.0.0.1:9809, :9809 or [::1]:9809';
// RFC 1123 host names; enough to reject typos such as "http://..." or "host:port:extra".
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Parses "127.0.0.1:9809", ":9809", "[::1]:0" or "localhost:9809"; throws an Error naming the address otherwise. */
export function parseListenAddress(address: string): ListenAddress {
  const fail = (why: string): never => {
    throw new Error(`invalid metrics address "${address}": ${why} (expected HOST:PORT, ${EXAMPLES})`);
  };
  const trimmed = address.trim();
  let hostPart: string;
  let portPart: string;
  if (trimmed.startsWith('[')) {
    const close = trimmed.indexOf(']');
    if (close < 0 || trimmed[close + 1] !== ':') return fail('an IPv6 host must be written [ADDR]:PORT');
    hostPart = trimmed.slice(1, close);
    portPart = trimmed.slice(close + 2);
    if (isIP(hostPart) !== 6) return fail(`"${hostPart}" is not an IPv6 address`);
  } else {
    const colon = trimmed.lastIndexOf(':');
    if (colon < 0) return fail('the port is missing');
    hostPart = trimmed.slice(0, colon);
    portPart = trimmed.slice(colon + 1);
    if (hostPart.includes(':')) return fail('an IPv6 host must be in brackets');
    if (hostPart !== '' && isIP(hostPart) !== 4 && !HOSTNAME.test(hostPart)) {
      return fail(`"${hostPart}" is neither an IP address nor a host name`);
    }
  }
  if (!/^\d{1,5}$/.test(portPart)) return fail(`"${portPart}" is not a port number`);
  const port = Number(portPart);
  if (port > 65535) return fail(`port ${port} is above 65535`);
  return { host: hostPart === '' ? undefined : hostPart, port };
}

/** The address a local client should dial to reach a server listening on `address`. */
export function dialHost(address: ListenAddress): string {
  // A wildcard listener answers on loopback too; dialing the wildcard itself is not portable.
  if (address.host === undefined || address.host === '0.0.0.0') return '127.0.0.1';
  if (address.host === '::') return '::1';
  return address.host;
}

/** Formats host and port for a URL, bracketing IPv6 literals. */
export function urlHost(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
