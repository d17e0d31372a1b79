// Field checks shared by the CSI handlers; each failure names the field and says what is wrong.
import * as path from 'node:path';
import { invalidArgument } from '../rpc/errors.js';
import { printable } from '../rpc/printable.js';

/** Volume and snapshot ids Lode issues ("lv-" or "sn-" + hex + "." + node) and kubelet's inline ids ("csi-" + hex) all fit this. */
const VOLUME_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const MAX_NAME_BYTES = 128;

export function requireVolumeId(id: string, field = 'volume_id', what = 'volume id'): string {
  if (id === '') throw invalidArgument(`${field} is required`);
  if (!VOLUME_ID.test(id) || id.includes('..')) {
    throw invalidArgument(`${field} "${printable(id)}" is not a ${what}: expected up to 128 letters, digits, '.', '_' or '-'`);
  }
  return id;
}

export function requireName(name: string): string {
  if (name === '') throw invalidArgument('name is required');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) throw invalidArgument(`name is longer than ${MAX_NAME_BYTES} bytes`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalidArgument('name contains control characters');
  return name;
}

/**
 * An absolute, normalised path below one of `roots` and outside every pool, so a caller
 * can never make the driver mount over system directories or over its own data.
 */
export function requireTargetPath(p: string, field: string, roots: readonly string[], forbidden: readonly string[]): string {
  if (p === '') throw invalidArgument(`${field} is required`);
  if (p.includes('\0')) throw invalidArgument(`${field} contains a NUL byte`);
  if (!path.isAbsolute(p)) throw invalidArgument(`${field} "${printable(p)}" must be an absolute path`);
  if (p.length > 4096) throw invalidArgument(`${field} is longer than 4096 characters`);
  const normal = path.normalize(p).replace(/(.)\/+$/, '$1');
  if (normal !== p.replace(/(.)\/+$/, '$1')) throw invalidArgument(`${field} "${printable(p)}" must be normalised (no "..", "." or "//")`);
  if (!roots.some((root) => isInside(normal, root))) {
    throw invalidArgument(`${field} "${printable(p)}" is outside the allowed target roots (${roots.join(', ')})`);
  }
  if (forbidden.some((dir) => normal === dir || isInside(normal, dir) || isInside(dir, normal))) {
    throw invalidArgument(`${field} "${printable(p)}" overlaps a storage pool directory`);
  }
  return normal;
}

/** `p` as path.resolve has it, without its work when it is already so (an absolute path with no empty, "." or ".." component and no trailing slash). */
function canonical(p: string): string {
  if (p === '/') return p;
  const plain = p.startsWith('/') && !p.endsWith('/') && !p.includes('//') && !/\/\.\.?(?:\/|$)/.test(p);
  return plain ? p : path.resolve(p);
}

/**
 * True when `p` is strictly below `dir`, component by component: "/a/..data" is below "/a",
 * "/a/bc" is not below "/a/b". A string comparison of the canonical paths: stage and publish make
 * it for every mount in the node's table.
 */
export function isInside(p: string, dir: string): boolean {
  const child = canonical(p);
  const parent = canonical(dir);
  return parent === '/' ? child !== '/' : child.startsWith(`${parent}/`);
}

/** int64 fields arrive as decimal strings; anything outside what a JS number holds exactly is refused. */
export function parseBytes(value: string | number | undefined, field: string): number {
  const text = String(value ?? '0');
  if (!/^-?\d+$/.test(text)) throw invalidArgument(`${field} "${text}" is not an integer`);
  const big = BigInt(text);
  if (big < 0n) throw invalidArgument(`${field} must not be negative`);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER + 1;
  return Number(big);
}
