// Identity and the capability/info calls of Controller and Node: what kubelet and the sidecars read at start-up.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { expectCode, status, TOPOLOGY_KEY } from './support.js';

// dist/test/driver/ -> the repository's package.json, whose version the driver reports.
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ nodeId: 'node-ident-1' }); });
after(async () => { await h?.cleanup(); });

test('GetPluginInfo: the default driver name, a valid CSI name, and the package version', async () => {
  const info = await h.client.getPluginInfo();
  assert.equal(info.name, 'lode.csi.dev');
  assert.ok(info.name.length <= 63);
  assert.match(info.name, /^[a-zA-Z][A-Za-z0-9.\-_]{0,61}[a-zA-Z]$/);
  assert.equal(info.vendor_version, PACKAGE_VERSION);
  assert.deepEqual(info.manifest, { backend: 'loop', pools: 'fast' }, 'the manifest names the pools and the backends behind them');
});

test('GetPluginCapabilities: controller service, topology constraints and online expansion, nothing unknown', async () => {
  const res = await h.client.getPluginCapabilities();
  const services = res.capabilities.filter((c) => c.service).map((c) => c.service?.type);
  const expansion = res.capabilities.filter((c) => c.volume_expansion).map((c) => c.volume_expansion?.type);
  assert.deepEqual([...services].sort(), ['CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS']);
  assert.deepEqual(expansion, ['ONLINE']);
  assert.equal(res.capabilities.length, services.length + expansion.length);
});

test('Probe answers ready when loop devices and the pools are usable', async () => {
  const res = await h.client.probe();
  assert.equal(res.ready?.value, true);
});

test('Probe really checks the pools: a vanished pool directory makes it fail until the directory is back', async () => {
  const volumes = path.join(h.poolDir('fast'), 'volumes');
  assert.deepEqual(await fs.readdir(volumes), [], 'the pool must be empty for this test');
  await fs.rm(volumes, { recursive: true });
  try {
    const msg = await expectCode(h.client.probe(), status.FAILED_PRECONDITION, 'Probe with the pool gone');
    assert.match(msg, /fast/, 'the message names the pool');
  } finally {
    await fs.mkdir(volumes, { recursive: true, mode: 0o700 });
  }
  assert.equal((await h.client.probe()).ready?.value, true);
});

test('ControllerGetCapabilities: create/delete, list, capacity, snapshots and clones (a loop pool copies); no attach step, no controller expansion by default', async () => {
  const res = await h.client.controllerGetCapabilities();
  const types = res.capabilities.map((c) => c.rpc?.type);
  for (const t of ['CREATE_DELETE_VOLUME', 'LIST_VOLUMES', 'GET_CAPACITY', 'CREATE_DELETE_SNAPSHOT', 'LIST_SNAPSHOTS', 'CLONE_VOLUME'] as const) {
    assert.ok(types.includes(t), `missing ${t} in ${types.join(', ')}`);
  }
  // Claiming PUBLISH_UNPUBLISH would make Kubernetes wait for a ControllerPublish that never comes.
  for (const t of ['PUBLISH_UNPUBLISH_VOLUME', 'LIST_VOLUMES_PUBLISHED_NODES'] as const) {
    assert.ok(!types.includes(t), `${t} is claimed but not implemented`);
  }
  // In a cluster the one resizer would send ControllerExpandVolume to whichever node it reaches;
  // without the capability kubelet expands the volume through NodeExpandVolume on its own node.
  assert.ok(!types.includes('EXPAND_VOLUME'), 'EXPAND_VOLUME needs --controller-expansion');
});

test('NodeGetCapabilities: staging, stats, expansion and volume condition', async () => {
  const res = await h.client.nodeGetCapabilities();
  const types = res.capabilities.map((c) => c.rpc?.type);
  for (const t of ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME', 'VOLUME_CONDITION'] as const) {
    assert.ok(types.includes(t), `missing ${t} in ${types.join(', ')}`);
  }
  assert.ok(!types.includes('UNKNOWN'));
});

test('NodeGetInfo: the node id and exactly one topology segment naming this node', async () => {
  const info = await h.client.nodeGetInfo();
  assert.equal(info.node_id, 'node-ident-1');
  assert.equal(Number(info.max_volumes_per_node), 0, 'no per-node volume limit (0 = unlimited)');
  assert.deepEqual(info.accessible_topology?.segments, { [TOPOLOGY_KEY]: 'node-ident-1' });
});

test('the socket is not world-writable: only root and its group may drive mounts', async () => {
  const st = await fs.stat(h.socket);
  assert.ok(st.isSocket());
  assert.equal(st.mode & 0o007, 0, `socket mode ${(st.mode & 0o777).toString(8)}`);
});

test('one JSON log line per RPC with method, volume, status code and duration', async () => {
  await h.client.deleteVolume({ volume_id: 'lv-log-line-ok' });
  await h.client.validateVolumeCapabilities({ volume_id: 'lv-log-line-missing', volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] }).catch(() => undefined);
  type Line = { level?: string; msg?: string; method?: string; volume?: string; code?: string; durationMs?: unknown; error?: string };
  const find = (volume: string): Line | undefined => h.log.split('\n').filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line).find((l) => l.msg === 'rpc' && l.volume === volume);
  // The line is written before the answer; the pipe may deliver it a moment later.
  for (let i = 0; i < 100 && find('lv-log-line-missing') === undefined; i++) await new Promise((r) => setTimeout(r, 20));
  const ok = find('lv-log-line-ok');
  assert.ok(ok, 'no log line for DeleteVolume');
  assert.match(ok.method ?? '', /DeleteVolume/);
  assert.equal(ok.code, 'OK');
  assert.equal(typeof ok.durationMs, 'number');
  const failed = find('lv-log-line-missing');
  assert.ok(failed, 'no log line for ValidateVolumeCapabilities');
  assert.match(failed.method ?? '', /ValidateVolumeCapabilities/);
  assert.equal(failed.code, 'NOT_FOUND');
  assert.ok((failed.error ?? '').length > 0, 'a failed call logs its reason');
});

test('--driver-name renames the plugin and its topology key; --controller-expansion adds EXPAND_VOLUME', async () => {
  const other = await DriverHarness.start({ nodeId: 'node-ident-2', extraArgs: ['--driver-name', 'local.example.com', '--controller-expansion'] });
  try {
    assert.equal((await other.client.getPluginInfo()).name, 'local.example.com');
    const info = await other.client.nodeGetInfo();
    assert.deepEqual(info.accessible_topology?.segments, { 'topology.local.example.com/node': 'node-ident-2' });
    const types = (await other.client.controllerGetCapabilities()).capabilities.map((c) => c.rpc?.type);
    assert.ok(types.includes('EXPAND_VOLUME') && types.includes('CREATE_DELETE_VOLUME'), types.join(', '));
  } finally {
    await other.cleanup();
  }
});
