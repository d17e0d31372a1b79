// Content negotiation: which form a client's Accept header asks for (JSON, protobuf, Table, aggregated discovery).

export interface MediaRange {
  type: string;
  params: Record<string, string>;
}

/** Parses an Accept header into its media ranges, in the client's order (q-values are not used by Kubernetes clients). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*/*', params: {} }];
  return header.split(',').map((part) => {
    const [type, ...ps] = part.split(';').map((x) => x.trim());
    const params: Record<string, string> = {};
    for (const p of ps) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function isJson(m: MediaRange): boolean {
  return m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*';
}

export type ResponseForm = 'object' | 'protobuf' | 'table' | 'discovery-v2' | 'discovery-v2beta1';

/**
 * The first form in the client's list the server can give. Protobuf is offered for built-in
 * kinds only (custom resources have no protobuf form), `as=Table` only for
 * reads of resources, the aggregated discovery document only on /api and /apis; a plain
 * JSON entry (or none at all) means the ordinary object. Undefined: nothing acceptable (406).
 */
export function negotiate(accept: MediaRange[], offers: { table?: boolean; discovery?: boolean; protobuf?: boolean }): ResponseForm | undefined {
  for (const m of accept) {
    // Plain protobuf objects only (built-in kinds): Tables and discovery documents are served as JSON.
    if (m.type === PROTOBUF && offers.protobuf && m.params.as === undefined) return 'protobuf';
    if (!isJson(m)) continue;
    const as = m.params.as;
    if (as === undefined) return 'object';
    if (as === 'Table' && offers.table && m.params.g === 'meta.k8s.io' && (m.params.v === 'v1' || m.params.v === 'v1beta1')) return 'table';
    if (as === 'APIGroupDiscoveryList' && offers.discovery && m.params.g === 'apidiscovery.k8s.io') {
      if (m.params.v === 'v2') return 'discovery-v2';
      if (m.params.v === 'v2beta1') return 'discovery-v2beta1';
    }
  }
  return undefined;
}

/** The Content-Type naming the form sent, which clients check before decoding it. */
export function contentTypeOf(form: ResponseForm): string {
  switch (form) {
    case 'object': return 'application/json';
    case 'protobuf': return PROTOBUF;
    case 'table': return 'application/json;as=Table;v=v1;g=meta.k8s.io';
    case 'discovery-v2': return 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    case 'discovery-v2beta1': return 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
  }
}
