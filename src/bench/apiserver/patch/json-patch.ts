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

export function jsonPatch(target: Json, patch: unknown): Json {
  const ops = operations(patch);
  try {
    return fjp.applyPatch(structuredClone(target), ops, true, true, true).newDocument as Json;
  } catch (err) {
    const e = err as { name?: string; message?: string; operation?: { op?: string; path?: string } };
    const what = e.operation ? `${e.operation.op} ${e.operation.path}: ` : '';
    throw new PatchApplyError(`${what}${(e.message ?? String(err)).split('\n')[0]}`);
  }
}
