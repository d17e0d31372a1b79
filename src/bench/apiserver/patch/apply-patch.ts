// PATCH by Content-Type: JSON patch, merge patch, strategic merge patch; server-side apply is refused with a clear 415.
import type { ResourceType } from '../../api/resources.js';
import { badRequest, StatusError, unsupportedMediaType } from '../status.js';
import { jsonPatch, MalformedPatchError, PatchApplyError } from './json-patch.js';
import { mergePatch, type Json } from './merge-patch.js';
import { strategicFacts } from './patch-facts.js';
import { strategicMergePatch, StrategicPatchError } from './strategic-merge-patch.js';

export const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function parse(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw badRequest(`the patch is not valid JSON: ${(err as Error).message}`);
  }
}

/** The patched object; throws a StatusError the caller answers with. */
export function applyPatch(r: ResourceType, contentType: string, current: Json, body: string): Json {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  switch (type) {
    case 'application/json-patch+json':
      try {
        return jsonPatch(current, parse(body));
      } catch (err) {
        if (err instanceof MalformedPatchError) throw badRequest(err.message);
        // Upstream answers a patch that does not apply with 422 and no details.
        if (err instanceof PatchApplyError) throw new StatusError(422, 'Invalid', `the JSON patch does not apply: ${err.message}`);
        throw err;
      }
    case 'application/merge-patch+json': {
      const p = parse(body);
      if (p === null || typeof p !== 'object' || Array.isArray(p)) throw badRequest('a merge patch is a JSON object');
      return mergePatch(current, p);
    }
    case 'application/strategic-merge-patch+json': {
      const facts = strategicFacts(r.kind);
      if (facts === undefined) {
        throw unsupportedMediaType(`strategic merge patch is not supported for ${r.plural}.${r.group} (a custom resource): use a JSON merge patch (application/merge-patch+json) or a JSON patch`);
      }
      try {
        return strategicMergePatch(current, parse(body), facts);
      } catch (err) {
        if (err instanceof StrategicPatchError) throw badRequest(err.message);
        throw err;
      }
    }
    case 'application/apply-patch+yaml':
      throw unsupportedMediaType('server-side apply (application/apply-patch+yaml) is not served by the bench: use client-side apply (kubectl apply without --server-side) or another patch type');
    default:
      throw unsupportedMediaType(`the body of a PATCH must be one of ${PATCH_TYPES.slice(0, 3).join(', ')}, not ${JSON.stringify(contentType)}`);
  }
}
