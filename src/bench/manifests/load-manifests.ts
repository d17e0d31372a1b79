// Reads Kubernetes YAML (files or directories) into typed objects, with errors that name the file, object and field.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type AnyObject, type Kind } from '../api/kinds.js';
import { API_VERSIONS, isKind, isModelledKind, resourceForKind } from '../api/resources.js';
import { admit } from '../admission/admit.js';
import { invalidMessage } from '../admission/status.js';
import { at, isObject } from '../admission/json.js';
import { unmodelledPaths } from './modelled-fields.js';
import { refusedKindMessage } from './refused-kinds.js';

/** One object read from a manifest, with where it came from. */
export interface LoadedObject {
  kind: Kind;
  object: AnyObject;
  file: string;
}

/** Manifests refused: every problem found, each naming file, object and field. */
export class ManifestError extends Error {
  readonly problems: string[];

  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('\n'));
    this.problems = list;
  }
}

/** The .yaml/.yml files of a path (a directory is read in name order, not recursively). */
export function manifestFiles(path: string): string[] {
  if (statSync(path).isDirectory()) {
    return readdirSync(path).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => join(path, f));
  }
  return [path];
}

/** The manifest files of several paths, in order; a path that cannot be read is added to `problems`, and the rest still read. */
export function manifestFilesOf(paths: readonly string[], problems: string[]): string[] {
  const files: string[] = [];
  for (const p of paths) {
    try {
      files.push(...manifestFiles(p));
    } catch (err) {
      problems.push(`${p}: cannot read: ${(err as Error).message}`);
    }
  }
  return files;
}

/** Unmodelled fields seen so far across loads, each reported once per run, and the objects of kinds no controller acts on. */
export class UnmodelledFields {
  private readonly seen = new Map<string, string>();
  private readonly stored = new Map<string, number>();

  add(kind: Kind, paths: string[], where: string): void {
    for (const p of paths) {
      const key = `${kind}.${p}`;
      if (!this.seen.has(key)) this.seen.set(key, where);
    }
  }

  /** One object of a kind that is stored and served but not acted upon. */
  addStored(kind: Kind): void {
    this.stored.set(kind, (this.stored.get(kind) ?? 0) + 1);
  }

  /** "Kind.path (first seen in file: Kind/name)" lines. */
  list(): string[] {
    return [...this.seen].map(([k, w]) => `${k} (first in ${w})`);
  }

  /** Objects per stored-only kind, in the order first seen. */
  storedKinds(): Record<string, number> {
    return Object.fromEntries(this.stored);
  }

  get size(): number {
    return this.seen.size;
  }
}

/** The problems of one document or list item; several documents are checked before any error is raised. */
type Checked = { ok: LoadedObject } | { problems: string[] };

/** Parses YAML text holding one or more documents (a `kind: List` is unpacked). */
export function parseManifests(text: string, file: string, unmodelled?: UnmodelledFields): LoadedObject[] {
  const out: LoadedObject[] = [];
  const problems: string[] = [];
  const docs = parseAllDocuments(text);
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      problems.push(`${file}: document ${index + 1}: YAML error: ${doc.errors[0]!.message}`);
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items = isObject(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) collect(checkObject(item, `${file}: document ${index + 1}`, file, unmodelled), out, problems);
  });
  if (problems.length > 0) throw new ManifestError(problems);
  return out;
}

function collect(c: Checked, out: LoadedObject[], problems: string[]): void {
  if ('ok' in c) out.push(c.ok);
  else problems.push(...c.problems);
}

function checkObject(item: unknown, where: string, file: string, unmodelled: UnmodelledFields | undefined): Checked {
  if (!isObject(item)) return { problems: [`${where}: not an object`] };
  const kind = item.kind;
  const name = at(item, 'metadata.name') ?? (at(item, 'metadata.generateName') !== undefined ? `${String(at(item, 'metadata.generateName'))}*` : undefined);
  const label = `${file}: ${String(kind ?? '?')} "${String(name ?? '?')}"`;
  if (typeof kind !== 'string' || kind === '') return { problems: [`${where}: Object 'Kind' is missing`] };
  if (!isKind(kind)) return { problems: [`${label}: ${refusedKindMessage(kind, String(item.apiVersion ?? ''))}`] };
  if (item.apiVersion !== API_VERSIONS[kind] && !(resourceForKind(kind)?.alsoAccepted ?? []).includes(String(item.apiVersion))) {
    return { problems: [`${label}: apiVersion: ${kind} is served as ${API_VERSIONS[kind]}, not ${JSON.stringify(item.apiVersion)}`] };
  }
  const { object, errors } = admit(kind, item);
  if (errors.length > 0) return { problems: [`${file}: ${invalidMessage(kind, API_VERSIONS[kind], typeof name === 'string' ? name : '', errors)}`] };
  // What the user wrote is what is reported as not modelled, not the defaults the API server added.
  if (isModelledKind(kind)) unmodelled?.add(kind, unmodelledPaths(kind, item), `${file}: ${kind}/${String(name)}`);
  else unmodelled?.addStored(kind);
  return { ok: { kind, object: object as unknown as AnyObject, file } };
}

/** Loads every object of the given files or directories, in order; every file is checked before any error is raised. */
export function loadManifests(paths: string[], unmodelled?: UnmodelledFields): LoadedObject[] {
  const out: LoadedObject[] = [];
  const problems: string[] = [];
  for (const f of manifestFilesOf(paths, problems)) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (err) {
      problems.push(`${f}: cannot read: ${(err as Error).message}`);
      continue;
    }
    try {
      out.push(...parseManifests(text, f, unmodelled));
    } catch (err) {
      if (!(err instanceof ManifestError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length > 0) throw new ManifestError(problems);
  return out;
}

/** Checks inline objects (from a scenario step) the same way. */
export function checkInlineObjects(items: unknown[], where: string, unmodelled?: UnmodelledFields): LoadedObject[] {
  const out: LoadedObject[] = [];
  const problems: string[] = [];
  items.forEach((item, i) => collect(checkObject(item, `${where}: object ${i + 1}`, where, unmodelled), out, problems));
  if (problems.length > 0) throw new ManifestError(problems);
  return out;
}
