// Label selectors, node selectors, and taint toleration, with the matching rules of apimachinery and component-helpers.
import type { V1LabelSelector, V1LabelSelectorRequirement, V1Node, V1NodeSelector, V1NodeSelectorRequirement, V1Taint, V1Toleration } from '@kubernetes/client-node';

type Labels = Record<string, string>;

function requirementMatches(labels: Labels, key: string, operator: string, values: string[] | undefined): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, key);
  const v = labels[key];
  switch (operator) {
    case 'In': return has && (values ?? []).includes(v!);
    case 'NotIn': return !has || !(values ?? []).includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && Number(v) > Number((values ?? [])[0]);
    case 'Lt': return has && Number(v) < Number((values ?? [])[0]);
    default: return false;
  }
}

/** A metav1.LabelSelector: undefined/null selects nothing, {} selects everything. */
export function labelSelectorMatches(selector: V1LabelSelector | undefined | null, labels: Labels | undefined): boolean {
  if (selector === undefined || selector === null) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const r of selector.matchExpressions ?? ([] as V1LabelSelectorRequirement[])) {
    if (!requirementMatches(l, r.key, r.operator, r.values)) return false;
  }
  return true;
}

function nodeRequirementMatches(node: V1Node, r: V1NodeSelectorRequirement): boolean {
  return requirementMatches(node.metadata?.labels ?? {}, r.key, r.operator, r.values);
}

/** A NodeSelector: terms are ORed, requirements within a term ANDed; a term with nothing in it matches nothing. */
export function nodeSelectorMatches(selector: V1NodeSelector | undefined, node: V1Node): boolean {
  if (selector === undefined) return true;
  for (const term of selector.nodeSelectorTerms ?? []) {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) continue;
    const fieldsOk = fields.every((f) => f.key === 'metadata.name' && requirementMatches({ 'metadata.name': node.metadata?.name ?? '' }, f.key, f.operator, f.values));
    if (fieldsOk && exprs.every((r) => nodeRequirementMatches(node, r))) return true;
  }
  return false;
}

/** Whether a plain map selector (pod.spec.nodeSelector) matches. */
export function mapSelectorMatches(selector: Labels | undefined, labels: Labels | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if ((labels ?? {})[k] !== v) return false;
  return true;
}

export function tolerates(t: V1Toleration, taint: V1Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key === undefined || t.key === '') return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint no toleration covers, as the TaintToleration filter looks for. */
export function untoleratedTaint(taints: V1Taint[] | undefined, tolerations: V1Toleration[] | undefined): V1Taint | undefined {
  for (const taint of taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!(tolerations ?? []).some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}
