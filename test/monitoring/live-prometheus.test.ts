// A real Prometheus scrapes a real `lode driver` and the real sidecars with the component's rules: a filled pool fires LodePoolNearlyFull, orphans LodeOrphanedVolumes, every documented query evaluates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { request } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import type { VolumeCapability } from '../../src/csi/types.js';
import { DriverHarness, MiB } from '../helpers/driver-harness.js';
import { scaledDeadlineMs } from '../helpers/vm-slowdown.js';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { csiTool } from '../helpers/csi-tools.js';
import { ApiCluster } from '../helpers/api-cluster.js';
import { metricsPort } from '../driver/support.js';
import { REPO_ROOT, isObject, kubectlMissing } from '../deploy/render.js';
import { alertRules, prometheusTools, renderBaseWithMonitoring, ruleFileText, type Rule } from './monitoring-support.js';

const EXT4: VolumeCapability = { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
const NODE = 'node-prom';
const NAMESPACE = 'lode-system';
const POD = 'lode-node-test';
// The sidecars that serve metrics (the test tools name their binaries the same).
const SIDECARS = ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'livenessprobe'] as const;

/** A port nobody listens on right now (Prometheus is told it; a clash shows as its start failing). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => s.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function getJson(port: number, urlPath: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: urlPath }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    }).on('error', reject).end();
  });
}

interface PromSample { metric: Record<string, string>; value: [number, string] }

/** An instant query; throws with Prometheus's error (a parse error, say) when it is not a success. */
async function query(port: number, expr: string): Promise<PromSample[]> {
  const r = await getJson(port, `/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = r.body;
  if (!isObject(body) || body['status'] !== 'success' || !isObject(body['data'])) {
    throw new Error(`query ${expr}: ${JSON.stringify(body)}`);
  }
  const result = body['data']['result'];
  return Array.isArray(result) ? (result as PromSample[]) : [];
}

interface PromAlert { labels: Record<string, string>; annotations: Record<string, string>; state: string }

async function alerts(port: number): Promise<PromAlert[]> {
  const r = await getJson(port, '/api/v1/alerts');
  const body = r.body;
  assert.ok(isObject(body) && body['status'] === 'success' && isObject(body['data']), JSON.stringify(body));
  return body['data']['alerts'] as PromAlert[];
}

/** Polls `check` until it returns a value, up to a bound (a bound on waiting, not an assertion on time). */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, boundMs = scaledDeadlineMs(60_000)): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The PromQL lines of docs/operations.md's ```promql block (comments left out). */
async function docsQueries(): Promise<string[]> {
  const text = await fs.readFile(path.join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
  const blocks = [...text.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks.flatMap((b) => b.split('\n')).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** Dashboard queries with Grafana's variables given values Prometheus accepts. */
function dashboardQueries(dashboardJson: string): string[] {
  const dashboard: unknown = JSON.parse(dashboardJson);
  const out: string[] = [];
  for (const p of isObject(dashboard) && Array.isArray(dashboard['panels']) ? dashboard['panels'] : []) {
    for (const t of isObject(p) && Array.isArray(p['targets']) ? p['targets'] : []) {
      if (isObject(t) && typeof t['expr'] === 'string') out.push(t['expr'].replaceAll('$node', '.*').replaceAll('$__rate_interval', '1m'));
    }
  }
  return out;
}

// Series this test's driver does not have: thin pools are lvm's; without the upstream tools, the
// sidecars' too.
const ABSENT_HERE = /^lode_thin_pool_/;
const ABSENT_WITHOUT_SIDECARS = /^(lode_thin_pool_|csistoragecapacities_|csi_sidecar_)/;

test('Prometheus scrapes a real driver and its sidecars with the rules: a pool filled fires LodePoolNearlyFull, emptied it resolves; orphans fire LodeOrphanedVolumes; every documented query evaluates', { skip: kubectlMissing() }, async (t) => {
  const tools = prometheusTools(t);
  if (!tools) return;
  if (process.getuid?.() !== 0) {
    t.skip('the driver needs root (loop devices, mounts)');
    return;
  }
  const objects = await renderBaseWithMonitoring();
  const rules = alertRules(objects);
  const dashboard = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.labels?.['grafana_dashboard'] === '1');
  const dashboardJson = (dashboard?.['data'] as Record<string, string> | undefined)?.['lode-dashboard.json'] ?? '';

  // Undone in reverse order: Prometheus and the sidecars stop before the driver, the driver before
  // the API server, and the storage directory goes once nothing writes to it.
  const undo: Array<() => Promise<void>> = [];
  t.after(async () => {
    const errors: unknown[] = [];
    for (const step of undo.reverse()) await step().catch((err: unknown) => errors.push(err));
    if (errors.length > 0) throw errors[0];
  });

  // With API access (the bench's API server), so the orphan series exist: the test's volumes have
  // no PersistentVolume, and after the 2 s grace they are orphans.
  const apiCluster = await ApiCluster.start();
  undo.push(() => apiCluster.stop());
  // What the provisioner reads as it starts: its own Pod, whose owner (--capacity-ownerref-level=1)
  // owns the capacity objects, and a class of the pool to publish capacity for.
  apiCluster.store.create('Pod', {
    metadata: { name: POD, namespace: NAMESPACE, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'lode-node', uid: 'lode-node-uid', controller: true }] },
    spec: { nodeName: NODE, containers: [{ name: 'lode', image: 'lode' }] },
  });
  apiCluster.store.create('StorageClass', {
    metadata: { name: 'lode-fast' }, provisioner: 'lode.csi.dev', parameters: { pool: 'fast' }, volumeBindingMode: 'WaitForFirstConsumer',
  });
  const h = await DriverHarness.start({
    nodeId: NODE,
    pools: [{ name: 'fast', size: '256Mi' }],
    extraArgs: ['--metrics-address', '127.0.0.1:0', '--kubeconfig', apiCluster.kubeconfig, '--orphan-check', '1', '--orphan-grace', '2'],
  });
  undo.push(() => h.cleanup());
  const driverPort = await metricsPort(h);

  // The four sidecars whose metrics the PodMonitor scrapes, each with its args from the rendered
  // DaemonSet (the component's --http-endpoint on a free port of this machine instead of its own).
  // Without the upstream tools that part is left out (a failure under CI=true, which has them).
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  const sidecarPorts = new Map<string, number>();
  const sidecarTools = await Promise.all(SIDECARS.map(async (name) => ({ name, bin: await csiTool(name) })));
  const missing = sidecarTools.flatMap((x) => (typeof x.bin === 'string' ? [] : [x.bin.missing]));
  if (missing.length > 0 && process.env['CI'] === 'true') assert.fail(`CI=true: ${missing.join('; ')}`);
  if (missing.length > 0) t.diagnostic(`the sidecars' metrics not checked: ${missing.join('; ')}`);
  for (const { name, bin } of missing.length > 0 ? [] : sidecarTools) {
    if (typeof bin !== 'string') continue;
    const port = await freePort();
    sidecarPorts.set(name, port);
    const args = (ds.spec?.template.spec?.containers.find((c) => c.name === name)?.args ?? []).map((a) => {
      if (a.startsWith('--csi-address=')) return `--csi-address=${h.socket}`;
      if (a.startsWith('--http-endpoint=')) return `--http-endpoint=127.0.0.1:${port}`;
      return a.replaceAll('$(NAMESPACE)', NAMESPACE);
    });
    assert.ok(args.some((a) => a.startsWith('--http-endpoint=')), `${name} has no --http-endpoint`);
    // The livenessprobe talks to the driver only; the others read and write the API.
    const api = name === 'livenessprobe' ? [] : [`--kubeconfig=${apiCluster.kubeconfig}`];
    const child = spawn(bin, [...api, ...args], { env: { ...process.env, NODE_NAME: NODE, NAMESPACE, POD_NAME: POD }, stdio: 'ignore' });
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    undo.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await gone;
    });
  }

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-prometheus-'));
  undo.push(() => fs.rm(dir, { recursive: true, force: true }));
  // The rules as shipped, but every `for:` at 0s: the promtool cases (alerts.promtest.yaml) hold
  // each rule to its own `for:`; here the question is whether the expressions meet the series a
  // real driver exports, and waiting out 15 minutes would add nothing to that.
  await fs.writeFile(path.join(dir, 'rules.yaml'), ruleFileText(objects, (r: Rule) => (r.alert === undefined ? r : { ...r, for: '0s' })));
  await fs.writeFile(path.join(dir, 'prometheus.yml'), stringify({
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: ['rules.yaml'],
    // The labels the PodMonitor's relabelings give the driver's target.
    scrape_configs: [{ job_name: 'lode', static_configs: [
      { targets: [`127.0.0.1:${driverPort}`], labels: { container: 'lode', pod: POD } },
      ...[...sidecarPorts].map(([container, port]) => ({ targets: [`127.0.0.1:${port}`], labels: { container, pod: POD } })),
    ] }],
  }));
  const promPort = await freePort();
  const prom: ChildProcess = spawn(tools.prometheus, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
    '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let promLog = '';
  prom.stderr?.setEncoding('utf8').on('data', (c: string) => (promLog += c));
  const exited = new Promise<void>((resolve) => prom.once('exit', () => resolve()));
  undo.push(async () => {
    if (prom.exitCode === null && prom.signalCode === null) prom.kill('SIGTERM');
    await exited;
  });

  await waitFor('Prometheus to be ready', async () => {
    if (prom.exitCode !== null) throw new Error(`prometheus exited ${prom.exitCode}: ${promLog}`);
    const r = await getJson(promPort, '/-/ready').catch(() => undefined);
    return r?.status === 200 ? true : undefined;
  });
  await waitFor('the driver to be scraped', async () => ((await query(promPort, 'up{job="lode", container="lode"} == 1')).length === 1 ? true : undefined));

  if (sidecarPorts.size > 0) {
    await waitFor('every sidecar to be scraped', async () =>
      ((await query(promPort, 'up{job="lode", container!="lode"} == 1')).length === SIDECARS.length ? true : undefined));
    // kubelet's probe, by hand: the livenessprobe sidecar calls the driver's Probe and counts it.
    const health = await getJson(sidecarPorts.get('livenessprobe') ?? 0, '/healthz');
    assert.equal(health.status, 200, String(health.body));
    await waitFor('the livenessprobe sidecar\'s Probe count in Prometheus', async () =>
      (await query(promPort, 'csi_sidecar_operations_seconds_count{job="lode", container="livenessprobe", method_name="/csi.v1.Identity/Probe", grpc_status_code="OK"} >= 1')).length === 1 ? true : undefined);
    // The provisioner publishes the class's CSIStorageCapacity and says so in its gauges.
    await waitFor('the provisioner\'s capacity objects in Prometheus', async () =>
      ((await query(promPort, 'csistoragecapacities_desired_current{job="lode", container="csi-provisioner"} == 1 and on () csistoragecapacities_desired_goal{job="lode"} == 1')).length === 1 ? true : undefined));
    assert.equal(apiCluster.store.count('CSIStorageCapacity'), 1);
  }

  const nearlyFull = rules.find((r) => r.alert === 'LodePoolNearlyFull');
  assert.ok(nearlyFull, 'the rules have LodePoolNearlyFull');
  const pool = { pool: 'fast', node_id: NODE };
  const firing = async (): Promise<PromAlert | undefined> =>
    (await alerts(promPort)).find((a) => a.labels['alertname'] === 'LodePoolNearlyFull' && a.labels['pool'] === pool.pool && a.labels['node_id'] === pool.node_id && a.state === 'firing');
  const scrapedVolumes = (n: number) => async (): Promise<true | undefined> =>
    (await query(promPort, `lode_pool_volumes{pool="fast", node_id="${NODE}"} == ${n}`)).length === 1 ? true : undefined;

  // Seven of the pool's eight 32 MiB: 12.5 % left, above the 10 % line. Once Prometheus has seen
  // them, the rule's expression selects nothing and the alert is not active.
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const r = await h.client.createVolume({ name: `pvc-fill-${i}`, capacity_range: { required_bytes: 32 * MiB }, volume_capabilities: [EXT4] });
    ids.push(r.volume?.volume_id ?? '');
  }
  await waitFor('the seven volumes in the scrape', scrapedVolumes(7));
  assert.deepEqual(await query(promPort, nearlyFull.expr), [], 'at 12.5 % left the pool is not nearly full');
  // A rule evaluation after that scrape has run (1 s interval) before this look at the alerts.
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(await firing(), undefined, 'not firing at 12.5 % left');

  // A request the pool cannot hold is refused and counted under its code.
  await assert.rejects(
    h.client.createVolume({ name: 'pvc-too-big', capacity_range: { required_bytes: 64 * MiB }, volume_capabilities: [EXT4] }),
    (err: unknown) => grpcCode(err) === status.RESOURCE_EXHAUSTED || grpcCode(err) === status.OUT_OF_RANGE,
  );
  // 16 MiB more: 16 MiB of 256 left, 6.25 %.
  const last = await h.client.createVolume({ name: 'pvc-fill-last', capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [EXT4] });
  ids.push(last.volume?.volume_id ?? '');
  const cap = await h.client.getCapacity({ parameters: { pool: 'fast' } });
  assert.equal(Number(cap.available_capacity), 16 * MiB);
  // A stage and unstage, for the documented NodeStageVolume latency query.
  const staging = h.stagingPath('prom');
  await h.client.nodeStageVolume({ volume_id: last.volume?.volume_id ?? '', staging_target_path: staging, volume_capability: EXT4 });
  await h.client.nodeUnstageVolume({ volume_id: last.volume?.volume_id ?? '', staging_target_path: staging });

  const alert = await waitFor('LodePoolNearlyFull to fire', firing);
  // The volumes no PV names, past the grace period: LodeOrphanedVolumes, with their count.
  const orphans = await waitFor('LodeOrphanedVolumes to fire', async () =>
    (await alerts(promPort)).find((a) => a.labels['alertname'] === 'LodeOrphanedVolumes' && a.labels['pool'] === 'fast' && a.state === 'firing' && a.annotations['summary']?.startsWith('8 ')));
  assert.equal(orphans.labels['node_id'], NODE);
  assert.equal(alert.labels['severity'], 'warning');
  assert.equal(alert.labels['backend'], 'loop');
  // The annotation templates, expanded by Prometheus: the pool, the node, what is left.
  assert.match(alert.annotations['summary'] ?? '', /Lode pool fast on node-prom is nearly full/);
  assert.match(alert.annotations['description'] ?? '', /has 16MiB left/);

  // Every query of docs/operations.md, the rules and the dashboard parses and evaluates against
  // what this driver and its sidecars export, and every series they name is there (bar those
  // ABSENT_HERE says).
  await waitFor('the last volume in the scrape', scrapedVolumes(8));
  // rate() and increase() need two samples of a series: the refused create's was born in the last scrapes.
  await waitFor('three samples of the refused create', async () =>
    (await query(promPort, 'count_over_time(lode_csi_rpc_total{code!="OK"}[1m]) >= 3')).length > 0 ? true : undefined);
  const docs = await docsQueries();
  assert.ok(docs.length >= 8, `${docs.length} documented queries`);
  const results = new Map<string, number>();
  for (const expr of [...docs, ...rules.map((r) => r.expr), ...dashboardQueries(dashboardJson)]) {
    results.set(expr, (await query(promPort, expr)).length);
    for (const name of new Set(expr.match(/\b(?:lode_[a-z0-9_]+|process_[a-z_]+|nodejs_[a-z0-9_]+|csistoragecapacities_[a-z_]+|csi_sidecar_[a-z_]+)\b/g) ?? [])) {
      if ((sidecarPorts.size > 0 ? ABSENT_HERE : ABSENT_WITHOUT_SIDECARS).test(name)) continue;
      assert.ok((await query(promPort, `${name}{job="lode"}`)).length > 0, `${name} (in ${expr}) is not among the scraped series`);
    }
  }
  // The documented queries that this state must answer with series.
  const answered = (needle: string): number => {
    const expr = docs.find((d) => d.includes(needle));
    assert.ok(expr, `docs/operations.md has a query with ${needle}`);
    return results.get(expr) ?? 0;
  };
  assert.ok(answered('lode_pool_allocated_bytes / lode_pool_capacity_bytes') > 0, 'the pool is more than 85 % promised');
  assert.ok(answered('lode_csi_rpc_total{code!="OK"}') > 0, 'the refused create');
  assert.ok(answered('method="NodeStageVolume"') > 0, 'the stage');
  assert.ok(answered('lode_orphan_volumes > 0') > 0, 'the orphans');

  if (sidecarPorts.size > 0) {
    // The provisioner's GetCapacity and this test's: the node's capacity is being refreshed.
    const refreshed = async (): Promise<true | undefined> =>
      (await alerts(promPort)).some((a) => a.labels['alertname'] === 'LodeCapacityNotRefreshed' && a.labels['node_id'] === NODE) ? undefined : true;
    await waitFor('LodeCapacityNotRefreshed to be silent', refreshed);
    for (const name of ['LodeCapacityObjectsMissing', 'LodeCapacityObjectsObsolete', 'LodeDriverDown', 'LodeDriverRestarting', 'LodeCSICallsFailing']) {
      assert.ok(!(await alerts(promPort)).some((a) => a.labels['alertname'] === name), `${name} is active`);
    }
  }

  // Two volumes deleted: 80 MiB left, and the alert resolves.
  for (const id of ids.slice(0, 2)) await h.client.deleteVolume({ volume_id: id });
  await waitFor('LodePoolNearlyFull to resolve', async () => ((await firing()) === undefined ? true : undefined));
  for (const id of ids.slice(2)) await h.client.deleteVolume({ volume_id: id });
});
