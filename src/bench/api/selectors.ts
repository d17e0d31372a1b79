// Label selectors, node selectors, and taint toleration, with the matching rules of apimachinery and component-helpers.
import type { V1LabelSelector, V1LabelSelectorRequirement, V1Node, V1NodeSelector, V1NodeSelectorRequirement, V1Taint, V1Toleration } from '@kubernetes/client-node';

type Labels = Record<string, string>;

/** apimachinery's selection operators, as a labelSelector query parameter or a selector object's requirements give them. */
export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

/** One requirement of a label selector: the one form every selector here is matched in. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const INTEGER = /^-?\d+$/;

/** labels.Requirement.Matches: Gt and Lt compare integers, and a label value that is not one matches neither. */
export function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'Equals': return has && v === r.values[0];
    case 'NotEquals': return !has || v !== r.values[0];
    case 'In': return has && r.values.includes(v!);
    case 'NotIn': return !has || !r.values.includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && INTEGER.test(v!) && Number(v) > Number(r.values[0]);
    case 'Lt': return has && INTEGER.test(v!) && Number(v) < Number(r.values[0]);
  }
}

/** Whether every requirement matches (an empty list selects everything). */
export function labelsMatch(reqs: readonly LabelRequirement[], labels: Labels | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => requirementMatches(r, l));
}

const OBJECT_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

/** A requirement of a selector object (matchExpressions, nodeSelectorTerms); an operator outside the API's set matches nothing. */
function objectRequirementMatches(labels: Labels, key: string, operator: string, values: string[] | undefined): boolean {
  if (!OBJECT_OPERATORS.includes(operator)) return false;
  return requirementMatches({ key, operator: operator as LabelOperator, values: values ?? [] }, labels);
}

/** A metav1.LabelSelector: undefined/null selects nothing, {} selects everything. */
export function labelSelectorMatches(selector: V1LabelSelector | undefined | null, labels: Labels | undefined): boolean {
  if (selector === undefined || selector === null) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (!requirementMatches({ key: k, operator: 'Equals', values: [v] }, l)) return false;
  for (const r of selector.matchExpressions ?? ([] as V1LabelSelectorRequirement[])) {
    if (!objectRequirementMatches(l, r.key, r.operator, r.values)) return false;
  }
  return true;
}

function nodeRequirementMatches(node: V1Node, r: V1NodeSelectorRequirement): boolean {
  return objectRequirementMatches(node.metadata?.labels ?? {}, r.key, r.operator, r.values);
}

/** A NodeSelector: terms are ORed, requirements within a term ANDed; a term with nothing in it matches nothing. */
export function nodeSelectorMatches(selector: V1NodeSelector | undefined, node: V1Node): boolean {
  if (selector === undefined) return true;
  for (const term of selector.nodeSelectorTerms ?? []) {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) continue;
    const fieldsOk = fields.every((f) => f.key === 'metadata.name' && objectRequirementMatches({ 'metadata.name': node.metadata?.name ?? '' }, f.key, f.operator, f.values));
    if (fieldsOk && exprs.every((r) => nodeRequirementMatches(node, r))) return true;
  }
  return false;
}

/** Whether a plain map selector (pod.spec.nodeSelector) matches. */
export function mapSelectorMatches(selector: Labels | undefined, labels: Labels | undefined): boolean {
  return labelsMatch(Object.entries(selector ?? {}).map(([key, v]) => ({ key, operator: 'Equals', values: [v] })), labels);
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
