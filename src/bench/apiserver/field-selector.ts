// The fieldSelector query parameter: the field labels each kind supports upstream, and `=`, `==`, `!=` on them.
import type { Kind } from '../api/kinds.js';
import { SelectorSyntaxError } from './label-selector.js';

export interface FieldRequirement {
  field: string;
  equal: boolean;
  value: string;
}

/** A field label the kind does not index: upstream answers 400 BadRequest. */
export class UnsupportedFieldError extends Error {}

type Obj = Record<string, unknown>;
type Getter = (o: Obj) => string;

function at(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const p of path) cur = cur !== null && typeof cur === 'object' ? (cur as Obj)[p] : undefined;
  return cur;
}

function str(path: string): Getter {
  const parts = path.split('.');
  return (o) => {
    const v = at(o, parts);
    return v === undefined || v === null ? '' : String(v);
  };
}

/** Field labels beyond metadata.name / metadata.namespace, as each kind's registry strategy registers them. */
const EXTRA: Partial<Record<Kind, Record<string, Getter>>> = {
  Pod: {
    'spec.nodeName': str('spec.nodeName'),
    'spec.restartPolicy': str('spec.restartPolicy'),
    'spec.schedulerName': str('spec.schedulerName'),
    'spec.serviceAccountName': str('spec.serviceAccountName'),
    'spec.hostNetwork': (o) => String(at(o, ['spec', 'hostNetwork']) === true),
    'status.phase': str('status.phase'),
    'status.podIP': str('status.podIP'),
    'status.nominatedNodeName': str('status.nominatedNodeName'),
  },
  Event: {
    'involvedObject.kind': str('involvedObject.kind'),
    'involvedObject.namespace': str('involvedObject.namespace'),
    'involvedObject.name': str('involvedObject.name'),
    'involvedObject.uid': str('involvedObject.uid'),
    'involvedObject.apiVersion': str('involvedObject.apiVersion'),
    'involvedObject.resourceVersion': str('involvedObject.resourceVersion'),
    'involvedObject.fieldPath': str('involvedObject.fieldPath'),
    reason: str('reason'),
    reportingComponent: str('reportingComponent'),
    source: str('source.component'),
    type: str('type'),
  },
  Node: { 'spec.unschedulable': (o) => String(at(o, ['spec', 'unschedulable']) === true) },
  Namespace: { 'status.phase': str('status.phase') },
  Secret: { type: str('type') },
  Service: { 'spec.clusterIP': str('spec.clusterIP'), 'spec.type': str('spec.type') },
};

function getter(kind: Kind, field: string): Getter | undefined {
  if (field === 'metadata.name') return str('metadata.name');
  if (field === 'metadata.namespace') return str('metadata.namespace');
  return EXTRA[kind]?.[field];
}

/** Splits on unescaped commas; `\,` `\=` `\\` are a literal comma, equals sign and backslash. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) { cur += c + s[++i]; continue; }
    if (c === sep) { out.push(cur); cur = ''; continue; }
    cur += c;
  }
  out.push(cur);
  return out;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Parses `spec.nodeName=n1,status.phase!=Running` and checks each field is one the kind supports. */
export function parseFieldSelector(kind: Kind, s: string): FieldRequirement[] {
  if (s.trim() === '') return [];
  return splitUnescaped(s, ',').map((term) => {
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term.replace(/\\./g, (e) => e === '\\=' ? '\u0000' : e));
    if (m === null) throw new SelectorSyntaxError(`invalid selector: '${s}'; can't understand '${term}'`);
    const field = m[1]!.trim();
    const value = unescape(m[3]!.replace(/\u0000/g, '\\='));
    if (getter(kind, field) === undefined) throw new UnsupportedFieldError(`field label not supported: ${field}`);
    return { field, equal: m[2] !== '!=', value };
  });
}

export function fieldsMatch(kind: Kind, reqs: FieldRequirement[], object: unknown): boolean {
  return reqs.every((r) => ((getter(kind, r.field)!(object as Obj)) === r.value) === r.equal);
}
