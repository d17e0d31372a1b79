// What a request path names: a discovery document, or a resource by group, version, plural, namespace, name and subresource.

/** A path under /api or /apis that names resources. */
export interface ResourcePath {
  type: 'resource';
  /** '' for the core group (/api/v1). */
  group: string;
  version: string;
  plural: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export type RequestPath =
  | ResourcePath
  | { type: 'legacy-versions' }
  | { type: 'groups' }
  | { type: 'group'; group: string }
  | { type: 'group-version'; group: string; version: string }
  | { type: 'version' }
  | { type: 'health'; check: string }
  | { type: 'openapi'; rest: string }
  | { type: 'unknown' };

/** Subresources of a namespace itself: /api/v1/namespaces/NAME/status is not a list of "status" in NAME. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function resourceParts(group: string, version: string, parts: string[]): RequestPath {
  let namespace: string | undefined;
  let rest = parts;
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return { type: 'unknown' };
  return { type: 'resource', group, version, plural: rest[0]!, namespace, name: rest[1], subresource: rest[2] };
}

/** Splits a URL path (no query) the way the API server's request-info parser does. */
export function parseRequestPath(path: string): RequestPath {
  const parts = path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  if (parts.length === 0) return { type: 'unknown' };
  const [root] = parts;
  if (root === 'version' && parts.length === 1) return { type: 'version' };
  if ((root === 'healthz' || root === 'readyz' || root === 'livez')) return { type: 'health', check: parts.join('/') };
  if (root === 'openapi') return { type: 'openapi', rest: parts.slice(1).join('/') };
  if (root === 'api') {
    if (parts.length === 1) return { type: 'legacy-versions' };
    if (parts.length === 2) return { type: 'group-version', group: '', version: parts[1]! };
    return resourceParts('', parts[1]!, parts.slice(2));
  }
  if (root === 'apis') {
    if (parts.length === 1) return { type: 'groups' };
    if (parts.length === 2) return { type: 'group', group: parts[1]! };
    if (parts.length === 3) return { type: 'group-version', group: parts[1]!, version: parts[2]! };
    return resourceParts(parts[1]!, parts[2]!, parts.slice(3));
  }
  return { type: 'unknown' };
}

/** The verb as the API server's authorizer and audit name it (list vs get, watch, deletecollection...). */
export function verbOf(method: string, p: ResourcePath, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return p.name === undefined ? 'list' : 'get';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return p.name === undefined ? 'deletecollection' : 'delete';
    default: return method.toLowerCase();
  }
}
