// RFC 6902 JSON patch (application/json-patch+json), applied with fast-json-patch; errors sorted into the caller's malformed patch (400) and a patch that does not apply (422).
import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { Json } from './merge-patch.js';

/** The patch document itself is not a JSON patch (upstream: 400 BadRequest). */
export class MalformedPatchError extends Error {}
/** A well-formed patch that does not apply to this object (upstream: 422). */
export class PatchApplyError extends Error {}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

function operations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new MalformedPatchError('a JSON patch is a list of operations');
  patch.forEach((op, i) => {
    if (op === null || typeof op !== 'object' || !OPS.has((op as { op?: unknown }).op as string) || typeof (op as { path?: unknown }).path !== 'string') {
      throw new MalformedPatchError(`operation ${i}: expected {"op": add|remove|replace|move|copy|test, "path": "/..."}`);
    }
  });
  return patch as Operation[];
}

/** The member a pointer names in an object that exists, when that member is missing ("/spec/x" in a spec without x). */
function missingObjectMember(doc: Json, path: string): boolean {
  const i = path.lastIndexOf('/');
  if (i < 0) return false;
  const key = path.slice(i + 1).replaceAll('~1', '/').replaceAll('~0', '~');
  let parent: unknown;
  try {
    parent = path.slice(0, i) === '' ? doc : fjp.getValueByPointer(doc, path.slice(0, i));
  } catch {
    return false;
  }
  return parent !== null && typeof parent === 'object' && !Array.isArray(parent) && !Object.prototype.hasOwnProperty.call(parent, key);
}

/**
 * Applies the operations in order. One leniency of the API server's own JSON patch library
 * (evanphx/json-patch v4, which k8s.io/apiserver applies patches with): `replace` of a member
 * missing from an object that exists sets it, as `add` would, where RFC 6902 refuses. Clients
 * rely on it: the real snapshot-controller sets a VolumeSnapshot's default class with
 * `replace /spec/volumeSnapshotClassName` on a snapshot that names none.
 */
export function jsonPatch(target: Json, patch: unknown): Json {
  const ops = operations(patch);
  try {
    let doc = structuredClone(target);
    for (const op of ops) {
      const eff = op.op === 'replace' && missingObjectMember(doc, op.path) ? { ...op, op: 'add' as const } : op;
      doc = fjp.applyOperation(doc, eff, true, true, true).newDocument as Json;
    }
    return doc;
  } catch (err) {
    const e = err as { name?: string; message?: string; operation?: { op?: string; path?: string } };
    const what = e.operation ? `${e.operation.op} ${e.operation.path}: ` : '';
    throw new PatchApplyError(`${what}${(e.message ?? String(err)).split('\n')[0]}`);
  }
}
