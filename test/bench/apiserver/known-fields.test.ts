// The schema field validation uses at runtime (@kubernetes/client-node's models) against the kubernetes-models package's published types, and how unknown fields are found and named.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import * as models from '@kubernetes/client-node';
import { RESOURCES } from '../../../src/bench/api/resources.js';
import { dropUnknownFields, schemaOf } from '../../../src/bench/apiserver/known-fields.js';
import { checkBodyFields, fieldValidationOf } from '../../../src/bench/apiserver/field-validation.js';
import { StatusError } from '../../../src/bench/apiserver/status.js';

const require = createRequire(import.meta.url);
const KM_ROOT = dirname(require.resolve('kubernetes-models/package.json'));
const KM_APIMACHINERY = dirname(require.resolve('@kubernetes-models/apimachinery/package.json', { paths: [KM_ROOT] }));

/** One interface of kubernetes-models' declaration files: each property with the files of the model types it names. */
function kmProperties(file: string): Map<string, string[]> {
  const text = readFileSync(file, 'utf8');
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/import \{ (IIo\w+) \} from "([^"]+)";/g)) {
    const from = m[2]!;
    imports.set(m[1]!, from.startsWith('@kubernetes-models/apimachinery/') ? join(KM_APIMACHINERY, from.slice('@kubernetes-models/apimachinery/'.length)) + '.d.ts' : resolve(dirname(file), from) + '.d.ts');
  }
  const body = (/export interface I\w+(?: extends TypeMeta)? \{\n([\s\S]*?)\n\}/.exec(text)?.[1] ?? '').replace(/\/\*\*[\s\S]*?\*\//g, '');
  const props = new Map<string, string[]>();
  // Each property starts a line at four spaces; a multi-line type (a map) runs on to the next one.
  for (const chunk of body.split(/\n(?= {4}")/)) {
    const m = /^\s*"([^"]+)"\??: ([\s\S]*)$/.exec(chunk);
    if (m === null) continue;
    props.set(m[1]!, [...m[2]!.matchAll(/IIo\w+/g)].map((t) => imports.get(t[0])).filter((f): f is string => f !== undefined));
  }
  return props;
}

/** The model class a client-node type string names (through arrays and maps), if any. */
function cnClass(type: string): string | undefined {
  const inner = /^Array<(.+)>$/.exec(type)?.[1] ?? /^\{ \[key: string\]: (.+); \}$/.exec(type)?.[1] ?? type;
  const c = (models as unknown as Record<string, unknown>)[inner];
  return typeof c === 'function' && typeof (c as { getAttributeTypeMap?: unknown }).getAttributeTypeMap === 'function' ? inner : undefined;
}

function cnAttributes(cls: string): Map<string, string> {
  const c = (models as unknown as Record<string, { getAttributeTypeMap(): { baseName: string; type: string }[] }>)[cls]!;
  return new Map(c.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
}

/** Fields kubernetes-models declares under `file` that client-node's `cls` does not, as paths. */
function missing(file: string, cls: string, path: string, seen: Set<string>, compared = { n: 0 }): string[] {
  const key = `${file}|${cls}`;
  if (seen.has(key)) return [];
  seen.add(key);
  const cn = cnAttributes(cls);
  const out: string[] = [];
  for (const [name, refs] of kmProperties(file)) {
    const at = path === '' ? name : `${path}.${name}`;
    compared.n++;
    const t = cn.get(name);
    if (t === undefined) {
      out.push(at);
      continue;
    }
    const sub = cnClass(t);
    if (refs.length === 1 && sub !== undefined) out.push(...missing(refs[0]!, sub, at, seen, compared));
  }
  return out;
}

describe('known fields', () => {
  it('the runtime schema knows every field kubernetes-models declares for each served built-in kind', () => {
    let kinds = 0;
    for (const r of RESOURCES) {
      const cls = schemaOf(r);
      if (cls === undefined) {
        assert.equal(r.group, 'snapshot.storage.k8s.io', `${r.kind}: only the snapshot custom resources have no published model`);
        continue;
      }
      const file = join(KM_ROOT, r.group === '' ? '' : r.group, r.version, `${r.kind}.d.ts`);
      assert.deepEqual(missing(file, cls, '', new Set()), [], `${r.kind}: fields of kubernetes-models that ${cls} lacks`);
      kinds++;
    }
    assert.ok(kinds >= 25, `${kinds} kinds compared`);
  });

  it('the comparison goes deep, and finds what a model lacks (so the check above can fail)', () => {
    const compared = { n: 0 };
    assert.deepEqual(missing(join(KM_ROOT, 'apps', 'v1', 'StatefulSet.d.ts'), 'V1StatefulSet', '', new Set(), compared), []);
    assert.ok(compared.n > 300, `${compared.n} fields of a StatefulSet compared, pod template and claim templates included`);
    assert.ok(missing(join(KM_ROOT, 'v1', 'PodSpec.d.ts'), 'V1ServiceSpec', '', new Set()).includes('containers'));
  });

  it('the declaration reader sees nested fields', () => {
    const pod = kmProperties(join(KM_ROOT, 'v1', 'PodSpec.d.ts'));
    assert.ok(pod.has('containers') && pod.has('nodeName'));
    assert.match(pod.get('containers')![0]!, /Container\.d\.ts$/);
    assert.ok(kmProperties(pod.get('containers')![0]!).has('imagePullPolicy'));
  });

  it('drops unknown fields in place and names them as the strict decoder does', () => {
    const o = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', foo: 1,
      metadata: { name: 'web', labels: { anything: 'goes' }, bar: 2 },
      spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', imagee: 'y', resources: { limits: { cpu: '1' } } }] } }, selector: { matchLabels: { app: 'web' } } },
      status: { replicas: 1, nope: true },
    };
    assert.deepEqual(dropUnknownFields('V1StatefulSet', o), ['foo', 'metadata.bar', 'spec.template.spec.containers[1].imagee', 'status.nope']);
    assert.deepEqual(o.metadata, { name: 'web', labels: { anything: 'goes' } }, 'map keys (labels) are data, not fields');
    assert.deepEqual(o.spec.template.spec.containers[1], { name: 'b', resources: { limits: { cpu: '1' } } });
  });

  it('fieldValidation: Warn by default; Strict refuses with the decode error; Ignore is silent; other values are refused', () => {
    const pods = RESOURCES.find((r) => r.kind === 'Pod')!;
    assert.equal(fieldValidationOf(new URLSearchParams('')), 'Warn');
    const body = (): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', foo: 1 } });
    assert.deepEqual(checkBodyFields(pods, body(), 'Warn'), ['unknown field "metadata.foo"']);
    assert.deepEqual(checkBodyFields(pods, body(), 'Ignore'), []);
    assert.throws(() => checkBodyFields(pods, body(), 'Strict'), (e: unknown) => e instanceof StatusError && e.code === 400
      && e.message === 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.foo"');
    assert.throws(() => fieldValidationOf(new URLSearchParams('fieldValidation=strict')), (e: unknown) => e instanceof StatusError && e.code === 400);
  });
});
