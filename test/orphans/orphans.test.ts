// The orphan check of a real driver against the bench's API server: a volume no PV names is reported after the grace period, and an API that does not answer in full changes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { ORPHAN_METRIC_NAMES } from '../../src/driver/cluster/orphans/orphan-metrics.js';
import { LIST_PAGE_SIZE as PV_PAGE_SIZE } from '../../src/kube/informer.js';
import { ApiCluster } from '../helpers/api-cluster.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { findSamples, parseExposition, sampleValue, type Sample } from '../metrics/prom-text.js';
import { createVolume, exists, httpGet, logEntries, metricsPort, MiB, mountAt, stageAndPublish, teardown } from '../driver/support.js';

const DRIVER = 'lode.csi.dev';
// A long watch history: the fault test lists more than 600 PVs.
const api = new ApiCluster({ driverName: DRIVER, historyLimit: 5_000, dirPrefix: 'lode-orphans-' });
const { store, events, requests, dir } = api;

/**
 * A fake at the process boundary: sits between the driver and the real bench API server and
 * fails the PersistentVolume requests as an API in trouble would: 500s, no answer at all, or
 * a 500 on the pages after the first (a list that fails part-way).
 */
type Fault = 'none' | 'status-500' | 'silent' | 'later-pages-500';
class FaultyApi {
  fault: Fault = 'none';
  private readonly sockets = new Set<net.Socket>();
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  url = '';

  constructor(private readonly upstream: URL) {}

  async start(): Promise<void> {
    this.server.on('connection', (c) => { this.sockets.add(c); c.on('close', () => this.sockets.delete(c)); });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (url.pathname.endsWith('/persistentvolumes')) {
      const fail = this.fault === 'status-500' || (this.fault === 'later-pages-500' && url.searchParams.has('continue'));
      // Never answered: the driver's bound must cancel the request (and close the connection).
      if (this.fault === 'silent') return;
      if (fail) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' }));
        return;
      }
    }
    const up = http.request({ host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  }

  async close(): Promise<void> {
    for (const c of this.sockets) c.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

let proxy: FaultyApi;
let directConfig = '';
let proxyConfig = '';

function pv(name: string, handle: string, driver = DRIVER): V1PersistentVolume {
  return {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name, finalizers: ['external-provisioner.volume-kubernetes-io/finalizer'] },
    spec: { capacity: { storage: '16Mi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'lode', csi: { driver, volumeHandle: handle } },
  };
}

/** As `kubectl patch pv --type=merge -p '{"metadata":{"finalizers":null}}'` and `kubectl delete pv`: the provisioner never calls DeleteVolume. */
function forceDeletePv(name: string): void {
  store.modify('PersistentVolume', name, undefined, (o) => { o.metadata!.finalizers = []; });
  assert.ok(store.delete('PersistentVolume', name));
  assert.equal(store.get('PersistentVolume', name), undefined);
}

type Line = Record<string, unknown>;

/** Waits until the driver's log holds `count` lines matching `match`; a bound against a driver that never logs them, not a speed check. */
async function waitForLines(h: DriverHarness, match: (l: Line) => boolean, count = 1, boundMs = 120_000): Promise<Line[]> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const found = logEntries(h).filter(match);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`the driver logged ${found.length} of ${count} awaited lines:\n${h.log.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const msgIs = (m: string) => (l: Line) => l['msg'] === m;
const msgStarts = (m: string) => (l: Line) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith(m);
const about = (id: string, p: (l: Line) => boolean) => (l: Line) => p(l) && l['id'] === id;
const REPORTED = msgStarts('orphaned volume: ');
const WATCHING = msgStarts('no PersistentVolume names this volume');
const COMPLETE = msgIs('orphan check');
const SKIPPED = msgStarts('orphan check skipped');
const DELETED = msgStarts('orphaned volume deleted');
const IN_USE = msgStarts('orphaned volume is in use');

async function scrape(port: number): Promise<Sample[]> {
  const r = await httpGet(port, '/metrics');
  assert.equal(r.status, 200);
  return parseExposition(r.body);
}

function eventsAbout(reason: string, id: string): Array<Record<string, unknown>> {
  return (store.list('Event') as unknown as Array<Record<string, unknown>>).filter((e) => e['reason'] === reason && String(e['message']).includes(id));
}

async function listedIds(h: DriverHarness): Promise<string[]> {
  return (await h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id ?? '');
}

before(async () => {
  await api.start();
  const base = api.url;
  for (const name of ['node-orphans', 'node-faults']) store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  proxy = new FaultyApi(new URL(base));
  await proxy.start();
  directConfig = path.join(dir, 'direct');
  writeKubeconfig(directConfig, base);
  proxyConfig = path.join(dir, 'proxy');
  writeKubeconfig(proxyConfig, proxy.url);
});

after(async () => {
  await proxy.close();
  await api.stop();
});

describe('orphaned volumes', { skip: process.getuid?.() !== 0 ? 'the driver needs root' : false }, () => {
  it('reports a volume whose PV was force-deleted after the grace period (log, metric, one Event on the Node), never one a PV names, and deletes nothing', async (t) => {
    const h = await DriverHarness.start({
      nodeId: 'node-orphans',
      extraArgs: ['--kubeconfig', directConfig, '--orphan-check', '1', '--orphan-grace', '6', '--metrics-address', '127.0.0.1:0', '--log-level', 'debug'],
    });
    t.after(() => h.cleanup());
    const port = await metricsPort(h);
    const forced = await createVolume(h, 'pvc-forced', 16 * MiB);
    const kept = await createVolume(h, 'pvc-kept', 16 * MiB);
    const late = await createVolume(h, 'pvc-late', 16 * MiB);
    store.create('PersistentVolume', pv('pvc-forced', forced.id));
    store.create('PersistentVolume', pv('pvc-kept', kept.id));
    // The late PV is written only once a complete list has missed its volume (its clock runs),
    // well within the grace period: as csi-provisioner writes a PV after CreateVolume returns.
    await waitForLines(h, about(late.id, WATCHING));
    store.create('PersistentVolume', pv('pvc-late', late.id));
    const completeBefore = logEntries(h).filter(COMPLETE).length;
    await waitForLines(h, COMPLETE, completeBefore + 1);
    forceDeletePv('pvc-forced');

    const [report] = await waitForLines(h, about(forced.id, REPORTED));
    assert.equal(report!['pool'], 'fast');
    assert.equal(report!['bytes'], forced.capacity);
    // Rounds go on: the late volume's clock, started before the forced one's, is long past the
    // grace period, and neither it nor the kept one is reported; the Event is not repeated.
    const completeAtReport = logEntries(h).filter(COMPLETE).length;
    await waitForLines(h, COMPLETE, completeAtReport + 3);
    assert.deepEqual(logEntries(h).filter(REPORTED).map((l) => l['id']), [forced.id]);

    const orphanEvents = eventsAbout('OrphanedVolume', forced.id);
    assert.equal(orphanEvents.length, 1, JSON.stringify(store.list('Event')));
    const ev = orphanEvents[0]!;
    assert.deepEqual(ev['involvedObject'], { apiVersion: 'v1', kind: 'Node', name: 'node-orphans', uid: 'node-orphans' });
    assert.equal(ev['type'], 'Warning');
    assert.match(String(ev['message']), /pool fast, 16Mi, is named by no PersistentVolume of lode\.csi\.dev since .*not deleted: --delete-orphans is off/);
    assert.equal((store.list('Event') as unknown as Array<Record<string, unknown>>).filter((e) => e['reason'] === 'OrphanedVolume').length, 1);
    assert.equal(requests.filter((r) => r === 'lode-driver create events').length, 1, 'one Event, not one per round');
    assert.equal(requests.filter((r) => r === 'lode-driver patch events').length, 0, 'not refreshed every round either');
    assert.ok(events.events.some((e) => e.reason === 'ApiWrite' && /^create events default\/lode-orphanedvolume-\S+ by lode-driver: Warning OrphanedVolume on Node\/node-orphans: /.test(e.message)), 'the run\'s event log shows the driver\'s write');

    let s = await scrape(port);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.volumes, { pool: 'fast' }), 1);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.bytes, { pool: 'fast' }), forced.capacity);
    assert.ok(sampleValue(s, ORPHAN_METRIC_NAMES.checks, { outcome: 'complete' }) >= 5);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.checks, { outcome: 'skipped' }), 0);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.deleted, { pool: 'fast' }), 0);
    // Without --delete-orphans the orphan stays.
    assert.deepEqual((await listedIds(h)).sort(), [forced.id, kept.id, late.id].sort());

    // A PV that names it again ends the report.
    store.create('PersistentVolume', pv('pvc-forced-again', forced.id));
    await waitForLines(h, about(forced.id, msgStarts('volume no longer an orphan')));
    s = await scrape(port);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.volumes, { pool: 'fast' }), 0);
    assert.equal(findSamples(s, ORPHAN_METRIC_NAMES.bytes, { pool: 'fast' })[0]?.value, 0);
    for (const v of [forced, kept, late]) await h.client.deleteVolume({ volume_id: v.id });
  });

  it('with --delete-orphans: an API that answers 500, does not answer, or fails part-way through the list changes nothing; then the unused orphan is deleted and the published one only reported', async (t) => {
    proxy.fault = 'status-500';
    t.after(() => { proxy.fault = 'none'; });
    const h = await DriverHarness.start({
      nodeId: 'node-faults',
      extraArgs: ['--kubeconfig', proxyConfig, '--api-timeout', '1', '--orphan-check', '1', '--orphan-grace', '2', '--delete-orphans', '--metrics-address', '127.0.0.1:0', '--log-level', 'debug'],
    });
    t.after(() => h.cleanup());
    const port = await metricsPort(h);
    const keep = await createVolume(h, 'pvc-keep', 16 * MiB);
    const free = await createVolume(h, 'pvc-free', 16 * MiB);
    const busy = await createVolume(h, 'pvc-busy', 16 * MiB);
    const { target } = await stageAndPublish(h, busy.id, 'busy');
    // Names that sort after every filler below, so these PVs come on the second page.
    store.create('PersistentVolume', pv('zzz-keep', keep.id));
    store.create('PersistentVolume', pv('zzz-free', free.id));
    store.create('PersistentVolume', pv('zzz-busy', busy.id));

    // Each phase lasts until the driver's PV cache has failed that way (its list is tried
    // again with a growing pause, whatever the rounds do), and spans more than the grace
    // period: had a round taken the failure for "no PVs", it would have reported all three
    // and deleted the unused two.
    const failedWith = (pattern: RegExp) => (l: Line): boolean => l['msg'] === 'informer: list or watch failed; trying again' && pattern.test(String(l['error']));
    // A round skipped for that very failure (named in its line), then a few more rounds.
    const skippedFor = (pattern: RegExp) => (l: Line): boolean => SKIPPED(l) && pattern.test(String(l['error']));
    await waitForLines(h, failedWith(/page 1\).*answered 500/));
    await waitForLines(h, skippedFor(/page 1\).*answered 500/));
    let skipped = logEntries(h).filter(SKIPPED).length;
    await waitForLines(h, SKIPPED, skipped + 2);
    proxy.fault = 'silent';
    await waitForLines(h, failedWith(/no answer .* within 10000 ms/));
    for (let i = 0; i < PV_PAGE_SIZE + 100; i++) store.create('PersistentVolume', pv(`aaa-filler-${String(i).padStart(4, '0')}`, `lv-filler-${i}`));
    proxy.fault = 'later-pages-500';
    await waitForLines(h, failedWith(/page 2\).*answered 500/));
    // The first page came, the second failed: the round says so, and learns nothing.
    await waitForLines(h, skippedFor(/page 2\).*answered 500/));
    skipped = logEntries(h).filter(SKIPPED).length;
    await waitForLines(h, SKIPPED, skipped + 2);

    assert.deepEqual(logEntries(h).filter((l) => REPORTED(l) || WATCHING(l) || DELETED(l) || IN_USE(l)), []);
    assert.equal(logEntries(h).filter(COMPLETE).length, 0);
    assert.deepEqual((await listedIds(h)).sort(), [keep.id, free.id, busy.id].sort());
    assert.ok(await exists(path.join(h.poolDir('fast'), 'volumes', `${free.id}.img`)));
    let s = await scrape(port);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.volumes, { pool: 'fast' }), 0);
    assert.ok(sampleValue(s, ORPHAN_METRIC_NAMES.checks, { outcome: 'skipped' }) >= 6);
    assert.deepEqual((store.list('Event') as unknown as Array<{ involvedObject?: { name?: string } }>).filter((e) => e.involvedObject?.name === 'node-faults'), []);

    // The API answers again; two PVs are force-deleted.
    proxy.fault = 'none';
    forceDeletePv('zzz-free');
    forceDeletePv('zzz-busy');
    await waitForLines(h, about(free.id, DELETED));
    await waitForLines(h, about(busy.id, IN_USE));
    assert.deepEqual((await listedIds(h)).sort(), [keep.id, busy.id].sort());
    assert.equal(await exists(path.join(h.poolDir('fast'), 'volumes', `${free.id}.img`)), false);
    assert.equal(await exists(path.join(h.poolDir('fast'), 'volumes', `${free.id}.json`)), false);
    assert.equal((await mountAt(target)).mountPoint, target, 'the published orphan keeps its mount');
    assert.equal(eventsAbout('OrphanedVolumeDeleted', free.id).length, 1);
    const inUse = eventsAbout('OrphanedVolumeInUse', busy.id);
    assert.equal(inUse.length, 1);
    assert.match(String(inUse[0]!['message']), /published at /);
    assert.deepEqual(logEntries(h).filter(REPORTED).map((l) => l['id']).sort(), [free.id, busy.id].sort());
    s = await scrape(port);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.volumes, { pool: 'fast' }), 1);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.bytes, { pool: 'fast' }), busy.capacity);
    assert.equal(sampleValue(s, ORPHAN_METRIC_NAMES.deleted, { pool: 'fast' }), 1);
    await teardown(h, busy.id, 'busy');
    await h.client.deleteVolume({ volume_id: keep.id });
  });
});
