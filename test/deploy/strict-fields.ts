// Test helper: finds fields a manifest sets that the Kubernetes types do not have, by walking kubernetes-models' declarations.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

// The models' JSON schemas allow unknown properties (as the OpenAPI documents do), so a typo
// validates. Their .d.ts files list every field of every type, which is enough to catch one.

interface Field {
  /** The interface the field holds (directly or as array elements), or undefined for a leaf or a map. */
  ref: string | undefined;
}

interface Shape {
  fields: Map<string, Field>;
}

const shapes = new Map<string, Shape | null>();

/** Absolute path of a model's .d.ts from a package specifier such as "kubernetes-models/v1/Pod". */
function declarationFile(specifier: string): string {
  const resolved = fileURLToPath(import.meta.resolve(specifier));
  return resolved.replace(/\.(m?js)$/, '.d.ts');
}

/** Reads the first interface of a declaration file; null when the file declares none (a type alias such as Quantity). */
function loadShape(file: string): Shape | null {
  const cached = shapes.get(file);
  if (cached !== undefined) return cached;
  const text = readFileSync(file, 'utf8');
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
    const [, name, from] = m as unknown as [string, string, string];
    imports.set(name, from.startsWith('.') ? path.resolve(path.dirname(file), from + '.d.ts') : declarationFile(from));
  }
  const start = text.search(/^export interface \w+( extends TypeMeta)? \{$/m);
  if (start < 0) {
    shapes.set(file, null);
    return null;
  }
  const body = text.slice(start, text.indexOf('\n}', start));
  const fields = new Map<string, Field>();
  if (/^export interface \w+ extends TypeMeta/.test(body)) {
    fields.set('apiVersion', { ref: undefined });
    fields.set('kind', { ref: undefined });
  }
  // Top-level members are indented by exactly four spaces; nested inline types by more.
  for (const m of body.matchAll(/^ {4}"([^"]+)"\??: (.+?);?$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    const ref = /^(?:Array<)?(I\w+)>?$/.exec(type)?.[1];
    fields.set(name, { ref: ref !== undefined ? imports.get(ref) : undefined });
  }
  const shape = { fields };
  shapes.set(file, shape);
  return shape;
}

/**
 * Dotted paths of every field in `value` that the model type at `modelPath` (e.g.
 * "apps/v1/DaemonSet") and its nested types do not declare.
 */
export function unknownFields(value: unknown, modelPath: string): string[] {
  const found: string[] = [];
  walk(value, declarationFile(`kubernetes-models/${modelPath}`), '', found);
  return found;
}

function walk(value: unknown, file: string, at: string, found: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, file, `${at}[${i}]`, found));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const shape = loadShape(file);
  if (shape === null) return;
  for (const [key, child] of Object.entries(value)) {
    const field = shape.fields.get(key);
    const where = at === '' ? key : `${at}.${key}`;
    if (field === undefined) {
      found.push(where);
      continue;
    }
    if (field.ref !== undefined) walk(child, field.ref, where, found);
  }
}
