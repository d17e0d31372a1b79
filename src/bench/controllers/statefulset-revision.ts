// A StatefulSet's revision: a name that changes exactly when its pod template does, carried by each pod it made.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { canonicalJson } from '../api/canonical-json.js';

/** The label upstream's controller puts on each pod: the revision of the template it was made from. */
export const REVISION_LABEL = 'controller-revision-hash';

/**
 * `<set>-<hash>`, as upstream names its ControllerRevisions: a 32-bit FNV-1a hash of the
 * template, its decimal digits spelt in the vowel-free alphabet upstream uses for such
 * suffixes. The bench stores no ControllerRevision objects; the name is what the
 * status and the pods' labels carry.
 */
export function templateRevision(sts: V1StatefulSet): string {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(canonicalJson(sts.spec?.template ?? {}), 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const suffix = [...String(h)].map((d) => alphabet[Number(d)]).join('');
  return `${sts.metadata?.name ?? ''}-${suffix}`;
}

export function podRevision(pod: V1Pod): string | undefined {
  return pod.metadata?.labels?.[REVISION_LABEL];
}
