// Whether a kind is namespaced, from the resource registry (a kind the bench does not serve counts as namespaced, the common case).
import { resourceForKind } from '../api/resources.js';

export function isNamespacedKind(kind: string): boolean {
  return resourceForKind(kind)?.namespaced ?? true;
}
