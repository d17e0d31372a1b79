// Which fields a kind's objects may carry, from the published API schema: @kubernetes/client-node's models, generated from Kubernetes' OpenAPI.
import * as models from '@kubernetes/client-node';
import type { ResourceType } from '../api/resources.js';

/** What a model class says about each of its fields: the JSON name and the type, as the generator wrote them. */
interface Attribute { baseName: string; type: string }
interface ModelClass { getAttributeTypeMap(): Attribute[] }

const registry = models as unknown as Record<string, unknown>;

function modelClass(name: string): ModelClass | undefined {
  const c = registry[name];
  return typeof c === 'function' && typeof (c as Partial<ModelClass>).getAttributeTypeMap === 'function' ? (c as unknown as ModelClass) : undefined;
}

/**
 * The schema of a served kind, or undefined for kinds the published models do not carry
 * (the snapshot.storage.k8s.io custom resources, whose schema is their CRD's). The class is
 * the kind under its version (V1Pod, V2HorizontalPodAutoscaler), or under its group's
 * prefix where the plain name is another group's (CoreV1Event).
 */
export function schemaOf(r: ResourceType): string | undefined {
  const v = r.version.charAt(0).toUpperCase() + r.version.slice(1);
  const prefix = r.group === '' ? 'Core' : '';
  for (const name of [`${v}${r.kind}`, `${prefix}${v}${r.kind}`]) if (modelClass(name) !== undefined) return name;
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Removes, in place, every field of `value` the schema `type` does not declare and returns
 * their paths as upstream's strict decoder names them (`metadata.foo`,
 * `spec.containers[0].imagee`). Maps, free-form (`any`) and scalar fields are not looked into
 * beyond their declared element type.
 */
export function dropUnknownFields(type: string, value: unknown, path = ''): string[] {
  const array = /^Array<(.+)>$/.exec(type);
  if (array !== null) {
    if (!Array.isArray(value)) return [];
    return value.flatMap((item, i) => dropUnknownFields(array[1]!, item, `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) {
    if (!isObject(value)) return [];
    return Object.entries(value).flatMap(([k, v]) => dropUnknownFields(map[1]!, v, path === '' ? k : `${path}.${k}`));
  }
  const model = modelClass(type);
  if (model === undefined || !isObject(value)) return [];
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  const unknown: string[] = [];
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    const t = fields.get(key);
    if (t === undefined) {
      unknown.push(at);
      delete value[key];
    } else {
      unknown.push(...dropUnknownFields(t, value[key], at));
    }
  }
  return unknown;
}
