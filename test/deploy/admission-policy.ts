// Test helper: decides an admission request against rendered ValidatingAdmissionPolicies and their bindings, evaluating their CEL with a general CEL implementation.
import { parse } from '@marcbachmann/cel-js';
import type { IValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import type { IValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import type { K8sObject } from './render.js';

// What the API server does and this does not: it type-checks each expression against the
// matched resources' schemas and offers Kubernetes' own CEL libraries (none of which the
// policies use); objects here are plain JSON, with integers as BigInt as CEL's int. What it
// does as the API server does: match by resource and operation, then every matchCondition,
// variables evaluated lazily, a binding's ConfigMap as `params` (parameterNotFoundAction),
// every validation must be true, and an expression that fails to evaluate denies
// (failurePolicy Fail, the policies' setting).

export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  resource: { group: string; version: string; resource: string };
  userInfo: { username: string; extra?: Record<string, string[]> };
  /** DeleteOptions on DELETE. */
  options?: Record<string, unknown> | null;
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
}

export interface Denial {
  policy: string;
  message: string;
}

type Compiled = ReturnType<typeof parse>;
const compiled = new Map<string, Compiled>();

/** Parses (once) a CEL expression; throws the parser's error for one that does not parse. */
export function celProgram(expression: string): Compiled {
  let p = compiled.get(expression);
  if (p === undefined) {
    p = parse(expression);
    compiled.set(expression, p);
  }
  return p;
}

/** Every CEL expression a policy holds, with where it is. */
export function expressionsOf(policy: IValidatingAdmissionPolicy): Array<{ where: string; expression: string }> {
  const name = policy.metadata?.name ?? '';
  const spec = policy.spec ?? {};
  return [
    ...(spec.matchConditions ?? []).map((m) => ({ where: `${name} matchCondition ${m.name}`, expression: m.expression })),
    ...(spec.variables ?? []).map((v) => ({ where: `${name} variable ${v.name}`, expression: v.expression })),
    ...(spec.validations ?? []).flatMap((v, i) => [
      { where: `${name} validation ${i + 1}`, expression: v.expression },
      ...(v.messageExpression !== undefined ? [{ where: `${name} validation ${i + 1} messageExpression`, expression: v.messageExpression }] : []),
    ]),
  ];
}

function matches(policy: IValidatingAdmissionPolicy, req: AdmissionRequest): boolean {
  return (policy.spec?.matchConstraints?.resourceRules ?? []).some((r) =>
    (r.apiGroups ?? []).includes(req.resource.group) && (r.apiVersions ?? []).includes(req.resource.version)
    && (r.resources ?? []).includes(req.resource.resource) && (r.operations ?? []).includes(req.operation));
}

/** Evaluates one expression; throws when CEL cannot (a missing field, a null where an object is read). */
function evaluate(expression: string, context: Record<string, unknown>): unknown {
  return celProgram(expression)(context);
}

/** The denials of every bound policy that applies to the request; [] means admitted. */
export function admit(objects: K8sObject[], req: AdmissionRequest): Denial[] {
  const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy') as unknown as IValidatingAdmissionPolicy[];
  const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as unknown as IValidatingAdmissionPolicyBinding[];
  const out: Denial[] = [];
  for (const binding of bindings) {
    const policy = policies.find((p) => p.metadata?.name === binding.spec?.policyName);
    if (policy === undefined) throw new Error(`binding ${binding.metadata?.name} names no shipped policy`);
    const name = policy.metadata?.name ?? '';
    if (!matches(policy, req)) continue;
    let params: unknown = null;
    const ref = binding.spec?.paramRef;
    if (ref !== undefined) {
      params = objects.find((o) => o.kind === policy.spec?.paramKind?.kind && o.metadata.name === ref.name && o.metadata.namespace === ref.namespace) ?? null;
      if (params === null) {
        if (ref.parameterNotFoundAction === 'Deny') out.push({ policy: name, message: `no ${policy.spec?.paramKind?.kind} ${ref.namespace}/${ref.name}` });
        continue;
      }
    }
    // Variables are evaluated when first used, as the API server does.
    const variables: Record<string, unknown> = {};
    const context: Record<string, unknown> = { request: req, object: req.object, oldObject: req.oldObject, params, variables };
    for (const v of policy.spec?.variables ?? []) {
      let value: { ok: unknown } | { err: unknown } | undefined;
      Object.defineProperty(variables, v.name, {
        enumerable: true,
        get: () => {
          if (value === undefined) {
            try { value = { ok: evaluate(v.expression, context) }; } catch (err) { value = { err }; }
          }
          if ('err' in value) throw value.err;
          return value.ok;
        },
      });
    }
    let applies = true;
    for (const m of policy.spec?.matchConditions ?? []) {
      if (evaluate(m.expression, context) !== true) { applies = false; break; }
    }
    if (!applies) continue;
    for (const v of policy.spec?.validations ?? []) {
      let ok: unknown;
      try {
        ok = evaluate(v.expression, context);
      } catch (err) {
        out.push({ policy: name, message: `expression failed: ${err instanceof Error ? err.message : String(err)}` });
        continue;
      }
      if (ok !== true) {
        out.push({ policy: name, message: v.messageExpression !== undefined ? String(evaluate(v.messageExpression, context)) : v.message ?? '' });
      }
    }
  }
  return out;
}
