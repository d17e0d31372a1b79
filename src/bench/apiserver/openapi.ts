// The OpenAPI v3 index and per-group-version documents kubectl reads before apply: each kind's PATCH operation and its fieldValidation parameter, no schemas.
import { createHash } from 'node:crypto';
import { RESOURCES } from '../api/resources.js';
import { servedGroups } from './discovery.js';

/** `api/v1`, `apis/storage.k8s.io/v1`: the keys of /openapi/v3's paths. */
function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/**
 * kubectl apply (1.27+) asks /openapi/v3 whether the server validates fields itself
 * (a PATCH operation of the kind with a `fieldValidation` parameter). With that answer it
 * leaves validation to the server and builds strategic merge patches from its own Go
 * types; without any document it refuses to apply unless --validate=false. The PATCH
 * operations carry no requestBody on purpose: one naming the strategic merge type would
 * make kubectl build patches from the schemas, which are not published.
 */
export function openApiV3Doc(group: string, version: string): object | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const paths: Record<string, object> = {};
  for (const r of rs) {
    const base = `/${gvPath(group, version)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}/{name}`;
    paths[base] = {
      patch: {
        operationId: `patch${r.kind}`,
        'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind: r.kind },
        'x-kubernetes-action': 'patch',
        parameters: [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }],
        responses: { 200: { description: 'OK' } },
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes (lode bench)', version: 'v1.32.0' }, paths };
}

function hashOf(doc: object): string {
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();
}

/** /openapi/v3: one entry per served group-version, each with the URL of its document. */
export function openApiV3Index(): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of servedGroups()) {
    for (const v of g.versions) {
      const key = gvPath(g.group, v);
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(openApiV3Doc(g.group, v)!)}` };
    }
  }
  return { paths };
}

/** The document for `rest` (what follows /openapi/v3/), or undefined. */
export function openApiV3For(rest: string): object | undefined {
  const parts = rest.split('/');
  if (parts[0] === 'api' && parts.length === 2) return openApiV3Doc('', parts[1]!);
  if (parts[0] === 'apis' && parts.length === 3) return openApiV3Doc(parts[1]!, parts[2]!);
  return undefined;
}
