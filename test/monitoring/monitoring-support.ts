// Test support for deploy/components/monitoring: Debian's promtool and prometheus, the component rendered on the base, its rules as a file.
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';
import { REPO_ROOT, isObject, renderKustomization, type K8sObject } from '../deploy/render.js';

export const COMPONENT_DIR = path.join(REPO_ROOT, 'deploy', 'components', 'monitoring');

const PROMTOOL = process.env['PROMTOOL'] ?? '/usr/bin/promtool';
const PROMETHEUS = process.env['PROMETHEUS'] ?? '/usr/bin/prometheus';

/**
 * The paths of promtool and prometheus, or undefined after skipping `t` with the apt-get line
 * that installs them; under CI=true, whose machine installs them (.ci/run), a missing one fails.
 */
export function prometheusTools(t: TestContext): { promtool: string; prometheus: string } | undefined {
  const missing = [PROMTOOL, PROMETHEUS].filter((p) => !existsSync(p));
  if (missing.length === 0) return { promtool: PROMTOOL, prometheus: PROMETHEUS };
  const why = `${missing.join(' and ')} not found: install with \`apt-get install -y --no-install-recommends prometheus\` (or set PROMTOOL and PROMETHEUS)`;
  if (process.env['CI'] === 'true') assert.fail(`CI=true: ${why}`);
  t.skip(why);
  return undefined;
}

/**
 * deploy/base with the component, as `kubectl kustomize` renders it: from a kustomization in a
 * temporary directory, which names both by relative paths (kustomize refuses absolute ones).
 */
export async function renderBaseWithMonitoring(): Promise<K8sObject[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-monitoring-'));
  try {
    const rel = (p: string): string => path.relative(dir, p);
    await fs.writeFile(path.join(dir, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [rel(path.join(REPO_ROOT, 'deploy', 'base'))],
      components: [rel(COMPONENT_DIR)],
    }));
    return await renderKustomization(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** One alerting or recording rule of a PrometheusRule. */
export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The groups of the rendered PrometheusRule (there must be exactly one). */
export function ruleGroups(objects: K8sObject[]): Array<{ name: string; rules: Rule[] }> {
  const found = objects.filter((o) => o.kind === 'PrometheusRule');
  assert.equal(found.length, 1, 'one PrometheusRule');
  const spec = found[0]!['spec'];
  assert.ok(isObject(spec) && Array.isArray(spec['groups']), 'PrometheusRule without spec.groups');
  return spec['groups'] as Array<{ name: string; rules: Rule[] }>;
}

/** Every alerting rule, in order. */
export function alertRules(objects: K8sObject[]): Rule[] {
  return ruleGroups(objects).flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
}

/** A Prometheus rule file (what rule_files and promtool read) of the groups, changed by `edit`. */
export function ruleFileText(objects: K8sObject[], edit: (rule: Rule) => Rule = (r) => r): string {
  return stringify({ groups: ruleGroups(objects).map((g) => ({ ...g, rules: g.rules.map(edit) })) });
}
