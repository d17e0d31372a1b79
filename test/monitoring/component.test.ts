// deploy/components/monitoring on deploy/base: the scrape targets agree with the ports and flags, the rules and dashboard use real series, promtool passes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { METRIC_NAMES } from '../../src/metrics/driver-metrics.js';
import { ORPHAN_METRIC_NAMES } from '../../src/driver/cluster/orphans/orphan-metrics.js';
import { parseListenAddress } from '../../src/metrics/listen-address.js';
import { REPO_ROOT, isObject, kubectlMissing, validateObject, type K8sObject } from '../deploy/render.js';
import { alertRules, prometheusTools, renderBaseWithMonitoring, ruleFileText, type Rule } from './monitoring-support.js';

const skip = kubectlMissing();
const PROMTEST = path.join(REPO_ROOT, 'test', 'monitoring', 'alerts.promtest.yaml');

// What the driver exports (histograms as their _bucket, _sum and _count series), and what the
// sidecars export that the rules and the dashboard use (live-prometheus.test.ts scrapes them).
const LODE_SERIES = new Set(
  [...Object.values(METRIC_NAMES), ...Object.values(ORPHAN_METRIC_NAMES)].flatMap((n) =>
    n === METRIC_NAMES.rpcDuration ? [`${n}_bucket`, `${n}_sum`, `${n}_count`] : [n]),
);
const SIDECAR_SERIES = new Set([
  'csistoragecapacities_desired_current', 'csistoragecapacities_desired_goal', 'csistoragecapacities_obsolete',
  'csi_sidecar_operations_seconds_bucket', 'csi_sidecar_operations_seconds_sum', 'csi_sidecar_operations_seconds_count',
]);

/** lode_*, csistoragecapacities_* and csi_sidecar_* names in a PromQL expression that nothing exports. */
export function unknownSeries(expr: string): string[] {
  const names = expr.match(/\b(?:lode|csistoragecapacities|csi_sidecar)_[a-z0-9_]+\b/g) ?? [];
  return names.filter((n) => !LODE_SERIES.has(n) && !SIDECAR_SERIES.has(n));
}

function execTool(file: string, args: string[], cwd?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

function container(ds: IDaemonSet, name: string): IContainer {
  const c = ds.spec?.template.spec?.containers.find((x) => x.name === name);
  assert.ok(c, `container ${name}`);
  return c;
}

/** The port of a container's --http-endpoint=:PORT flag, or undefined. */
function httpEndpointPort(c: IContainer): number | undefined {
  const flags = (c.args ?? []).filter((a) => a.startsWith('--http-endpoint='));
  assert.ok(flags.length <= 1, `${c.name}: ${flags.join(' ')}`);
  return flags[0] === undefined ? undefined : parseListenAddress(flags[0].slice('--http-endpoint='.length)).port;
}

/** Every expr in a Grafana dashboard, with its panel's title. */
function dashboardExprs(dashboard: unknown): Array<{ panel: string; expr: string }> {
  const out: Array<{ panel: string; expr: string }> = [];
  const panels = isObject(dashboard) && Array.isArray(dashboard['panels']) ? dashboard['panels'] : [];
  for (const p of panels) {
    if (!isObject(p) || !Array.isArray(p['targets'])) continue;
    for (const target of p['targets']) if (isObject(target) && typeof target['expr'] === 'string') out.push({ panel: String(p['title']), expr: target['expr'] });
  }
  return out;
}

/**
 * Alerts of the rule file that the promtool test file does not make both fire (a case with
 * exp_alerts) and stay silent (a case with an empty exp_alerts), and alerts it tests that the
 * rules do not have.
 */
export function untestedAlerts(alerts: string[], promtest: unknown): string[] {
  const firing = new Set<string>();
  const silent = new Set<string>();
  const tests = isObject(promtest) && Array.isArray(promtest['tests']) ? promtest['tests'] : [];
  for (const group of tests) {
    const cases = isObject(group) && Array.isArray(group['alert_rule_test']) ? group['alert_rule_test'] : [];
    for (const c of cases) {
      if (!isObject(c) || typeof c['alertname'] !== 'string') continue;
      const exp = c['exp_alerts'];
      (Array.isArray(exp) && exp.length > 0 ? firing : silent).add(c['alertname']);
    }
  }
  const problems: string[] = [];
  for (const a of alerts) {
    if (!firing.has(a)) problems.push(`${a}: no case where it fires`);
    if (!silent.has(a)) problems.push(`${a}: no case where it stays silent`);
  }
  for (const a of new Set([...firing, ...silent])) if (!alerts.includes(a)) problems.push(`${a}: tested but not in the rules`);
  return problems;
}

test('the component renders on the base; its objects validate and the DaemonSet keeps one of each container', { skip }, async () => {
  const objects = await renderBaseWithMonitoring();
  for (const o of objects.filter((x) => x.apiVersion !== 'monitoring.coreos.com/v1')) validateObject(o);
  const kinds = objects.map((o) => o.kind);
  assert.equal(kinds.filter((k) => k === 'PodMonitor').length, 1);
  assert.equal(kinds.filter((k) => k === 'PrometheusRule').length, 1);
  assert.equal(kinds.filter((k) => k === 'DaemonSet').length, 1);
  for (const k of ['Service', 'ServiceMonitor', 'Deployment']) assert.ok(!kinds.includes(k), k);
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  const names = ds.spec?.template.spec?.containers.map((c) => c.name) ?? [];
  assert.deepEqual(names, ['lode', 'csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'node-driver-registrar', 'livenessprobe']);
});

test('every PodMonitor endpoint is a declared port that its container really serves metrics on', { skip }, async () => {
  const objects = await renderBaseWithMonitoring();
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  const pm = objects.find((o) => o.kind === 'PodMonitor') as K8sObject;
  assert.equal(pm.metadata.namespace, 'lode-system');
  const spec = pm['spec'] as { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string; relabelings: Array<{ targetLabel: string; replacement: string }> }> };
  const podLabels = ds.spec?.template.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(spec.selector.matchLabels)) assert.equal(podLabels[k], v, `selector ${k}`);

  // Where each named port is declared, and which container the PodMonitor says serves it.
  const declared = new Map<string, { container: string; port: number }>();
  for (const c of ds.spec?.template.spec?.containers ?? []) for (const p of c.ports ?? []) if (p.name) declared.set(p.name, { container: c.name, port: p.containerPort });
  const servers = new Map<string, number>();
  for (const e of spec.podMetricsEndpoints) {
    const d = declared.get(e.port);
    assert.ok(d, `endpoint port ${e.port} is declared on no container`);
    assert.equal(e.path, '/metrics');
    const label = (name: string): string | undefined => e.relabelings.find((r) => r.targetLabel === name)?.replacement;
    assert.equal(label('job'), 'lode', `${e.port}: job label the rules select on`);
    const served = label('container');
    assert.ok(served, `${e.port}: no container label`);
    servers.set(served, d.port);
  }
  // The driver: listens on the pod network, on the port declared as "metrics".
  const lode = container(ds, 'lode');
  const address = lode.env?.filter((e) => e.name === 'LODE_METRICS_ADDRESS') ?? [];
  assert.equal(address.length, 1, 'the patch replaced the variable');
  const listen = parseListenAddress(address[0]?.value ?? '');
  assert.equal(listen.host, undefined, 'the driver listens on every interface of the pod');
  assert.equal(servers.get('lode'), listen.port);
  // The sidecars: each one's --http-endpoint is the port scraped under its name.
  for (const name of ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'livenessprobe']) {
    const port = httpEndpointPort(container(ds, name));
    assert.ok(port !== undefined, `${name} has no --http-endpoint`);
    assert.equal(servers.get(name), port, `${name}: scraped on the port it serves`);
  }
  // The registrar serves no metrics; the base's other flags are all still there.
  assert.ok(!servers.has('node-driver-registrar'));
  assert.ok(container(ds, 'csi-provisioner').args?.includes('--enable-capacity'));
  assert.ok(container(ds, 'csi-snapshotter').args?.includes('--node-deployment'));
});

test('the Grafana dashboard: labelled for the sidecar, valid JSON, only series that exist', { skip }, async () => {
  const objects = await renderBaseWithMonitoring();
  const cms = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.labels?.['grafana_dashboard'] === '1');
  assert.equal(cms.length, 1);
  const data = cms[0]!['data'] as Record<string, string>;
  assert.deepEqual(Object.keys(data), ['lode-dashboard.json']);
  const dashboard: unknown = JSON.parse(data['lode-dashboard.json']!);
  assert.ok(isObject(dashboard) && dashboard['uid'] === 'lode-csi');
  const exprs = dashboardExprs(dashboard);
  assert.ok(exprs.length >= 15, `${exprs.length} queries`);
  for (const { panel, expr } of exprs) assert.deepEqual(unknownSeries(expr), [], `panel "${panel}": ${expr}`);
  const ids = (dashboard['panels'] as Array<{ id: number }>).map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
});

test('the rules use only series that exist, and promtool check rules passes them', { skip }, async (t) => {
  const tools = prometheusTools(t);
  if (!tools) return;
  const objects = await renderBaseWithMonitoring();
  const alerts = alertRules(objects);
  assert.ok(alerts.length >= 10, `${alerts.length} alerts`);
  for (const r of alerts) {
    assert.deepEqual(unknownSeries(r.expr), [], `${r.alert}: ${r.expr}`);
    assert.ok(r.labels?.['severity'] === 'warning' || r.labels?.['severity'] === 'critical', `${r.alert}: severity`);
    assert.ok(r.annotations?.['summary'] && r.annotations['description'], `${r.alert}: summary and description`);
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-rules-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'rules.yaml'), ruleFileText(objects));
  const r = await execTool(tools.promtool, ['check', 'rules', path.join(dir, 'rules.yaml')]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`SUCCESS: ${ruleCount(objects)} rules found`));
  // The check can fail: a broken expression is reported.
  await fs.writeFile(path.join(dir, 'broken.yaml'), ruleFileText(objects, (x) => (x.alert === 'LodePoolNearlyFull' ? { ...x, expr: 'lode_pool_available_bytes <= ' } : x)));
  const broken = await execTool(tools.promtool, ['check', 'rules', path.join(dir, 'broken.yaml')]);
  assert.notEqual(broken.code, 0, broken.out);
});

function ruleCount(objects: K8sObject[]): number {
  return alertRules(objects).length;
}

test('promtool test rules: every alert fires in one case and stays silent in another', { skip }, async (t) => {
  const tools = prometheusTools(t);
  if (!tools) return;
  const objects = await renderBaseWithMonitoring();
  const names = alertRules(objects).map((r) => r.alert ?? '');
  const promtest: unknown = parse(await fs.readFile(PROMTEST, 'utf8'));
  assert.deepEqual(untestedAlerts(names, promtest), []);

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-promtest-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  // Without annotations: the cases are about when an alert fires and with which labels; the
  // annotation templates are checked by promtool check rules and expanded by the real Prometheus
  // in live-prometheus.test.ts. With them, every case would repeat each rule's full text.
  const stripped = (r: Rule): Rule => {
    const { annotations: _dropped, ...rest } = r;
    return rest;
  };
  await fs.writeFile(path.join(dir, 'rules.yaml'), ruleFileText(objects, stripped));
  await fs.copyFile(PROMTEST, path.join(dir, 'alerts.promtest.yaml'));
  const r = await execTool(tools.promtool, ['test', 'rules', 'alerts.promtest.yaml'], dir);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /SUCCESS/);

  // The cases can fail: with the pool threshold moved from 10 % to 11 %, the 11 % pool fires too.
  await fs.writeFile(path.join(dir, 'rules.yaml'), ruleFileText(objects, (x) => stripped(x.alert === 'LodePoolNearlyFull' ? { ...x, expr: x.expr.replace('0.1 *', '0.11 *') } : x)));
  const moved = await execTool(tools.promtool, ['test', 'rules', 'alerts.promtest.yaml'], dir);
  assert.notEqual(moved.code, 0, 'a moved threshold must fail the cases');
  assert.match(moved.out, /LodePoolNearlyFull/);
});

test('the coverage check names alerts without both cases, and cases of alerts that are gone', () => {
  const promtest = { tests: [{ alert_rule_test: [
    { alertname: 'A', exp_alerts: [{ exp_labels: {} }] },
    { alertname: 'A', exp_alerts: [] },
    { alertname: 'B', exp_alerts: [{ exp_labels: {} }] },
    { alertname: 'Gone', exp_alerts: [] },
  ] }] };
  assert.deepEqual(untestedAlerts(['A', 'B', 'C'], promtest), [
    'B: no case where it stays silent',
    'C: no case where it fires',
    'C: no case where it stays silent',
    'Gone: tested but not in the rules',
  ]);
  assert.deepEqual(unknownSeries('rate(lode_csi_rpc_total[5m]) + lode_pool_avialable_bytes + lode_csi_rpc_duration_seconds_bucket + csi_sidecar_operation_seconds_count'), ['lode_pool_avialable_bytes', 'csi_sidecar_operation_seconds_count']);
});
