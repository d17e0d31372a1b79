// Pool profiles on a real driver against the bench's API server: a node gets its pools from its label's profile with no entry of its own, a profile that adds a pool is taken live, and one that would shrink or drop a pool holding a volume is refused with an Event and a metric, while running and across a restart, while every byte stays.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApiCluster, untilAsync, until } from '../helpers/api-cluster.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, createVolume, fileHash, httpGet, logEntries, metricsPort, MiB, stageAndPublish, teardown, writeRandomFile } from '../driver/support.js';
import { PROFILE_METRIC_NAMES } from '../../src/driver/cluster/profiles/profile-metrics.js';
import { REASON_POOL_CHANGE_REFUSED } from '../../src/driver/cluster/profiles/profile-reload.js';

const needsRoot = process.getuid?.() !== 0 ? 'needs root (loop devices, mounts)' : false;
const LABEL = 'node.kubernetes.io/instance-type';
/** A line of the exposition: the series (of `pool`, when given; the registry adds driver and node labels) at `value`. */
function series(name: string, pool: string, value: number): RegExp {
  return new RegExp(`^${name}\\{${pool !== '' ? `(?=[^}]*pool="${pool}")` : ''}[^}]*\\} ${value}$`, 'm');
}

const api = new ApiCluster({ dirPrefix: 'lode-profiles-' });

describe('pool profiles on a running driver', { skip: needsRoot }, () => {
  let h: DriverHarness;
  let config = '';
  let host = '';
  let port = 0;
  /** Volumes staged by a test, undone in after() when a failed assertion skipped the test's own teardown (the pools lie outside the harness's root). */
  const staged = new Set<string>();
  const profile = (text: string) => fs.writeFile(path.join(config, 'profile.m-small'), text);

  before(async () => {
    await api.start();
    api.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-p', labels: { [LABEL]: 'm-small' } } });
    config = path.join(api.dir, 'pools');
    host = path.join(api.dir, 'host');
    await fs.mkdir(config);
    await fs.mkdir(host);
    await fs.writeFile(path.join(config, 'profile.m-small'), `fast=${host}/pools/fast,size=64Mi\n`);
    // Another profile and nothing for this node by name, and no "default": only the label can give it pools.
    await fs.writeFile(path.join(config, 'profile.m-large'), 'big=/nonexistent/big,size=1Gi\n');
    h = await DriverHarness.start({
      nodeId: 'node-p', pools: [],
      extraArgs: ['--pool-config', config, '--pool-root', host, '--kubeconfig', api.kubeconfig, '--capacity-refresh', '1', '--metrics-address', '127.0.0.1:0'],
    });
    port = await metricsPort(h);
  });

  after(async () => {
    for (const id of staged) await teardown(h, id, 'keep').catch(() => undefined);
    await h?.cleanup();
    await api.stop();
  });

  it('gets the pools of its label\'s profile without an entry of its own, and opens a pool the profile adds without a restart or a read of the Node per round', async () => {
    assert.equal(await available(h, { pool: 'fast' }), 64 * MiB);
    assert.equal(await available(h, { pool: 'bulk' }), 0, 'no such pool yet');
    const nodeReads = (): string[] => api.requests.filter((r) => / (get|list) nodes$/.test(r));
    const readsBefore = nodeReads();
    await profile(`fast=${host}/pools/fast,size=64Mi\nbulk=${host}/pools/bulk,size=32Mi\n`);
    await untilAsync('the added pool serves', async () => (await available(h, { pool: 'bulk' })) === 32 * MiB);
    // The rounds since (every second here) read the label from the watched Node, not the API.
    assert.deepEqual(nodeReads(), readsBefore, 'no read of the Node per round');
    // Counted just after the pool opens, so polled: GetCapacity may see the pool first.
    await untilAsync('the pool counted as added', async () => series(PROFILE_METRIC_NAMES.added, '', 1).test((await httpGet(port, '/metrics')).body));
  });

  it('refuses a change that would shrink or drop a pool holding a volume: an Event, the metric at 1, the volume and its bytes kept', async () => {
    const { id } = await createVolume(h, 'keep-me', 16 * MiB, { parameters: { pool: 'fast' } });
    staged.add(id);
    const { target } = await stageAndPublish(h, id, 'keep');
    const file = path.join(target, 'data.bin');
    const hash = await writeRandomFile(file, 4 * MiB);
    const freeBefore = await available(h, { pool: 'fast' });
    const refusals = () => api.store.list('Event').filter((e) => (e as { reason?: string }).reason === REASON_POOL_CHANGE_REFUSED) as Array<{ message?: string; involvedObject?: { name?: string } }>;

    await profile(`fast=${host}/pools/fast,size=8Mi\nbulk=${host}/pools/bulk,size=32Mi\n`);
    await until('a PoolChangeRefused Event', () => refusals().length === 1);
    assert.match(refusals()[0]!.message ?? '', /shrinks pool fast from 67108864 bytes to 8388608 bytes, and it holds 1 volume/);
    assert.equal(refusals()[0]!.involvedObject?.name, 'node-p');
    await untilAsync('the refusal metric', async () => series(PROFILE_METRIC_NAMES.refused, 'fast', 1).test((await httpGet(port, '/metrics')).body));
    assert.match((await httpGet(port, '/metrics')).body, series(PROFILE_METRIC_NAMES.refused, 'bulk', 0));

    // Dropping the pool altogether is refused the same way.
    await profile(`bulk=${host}/pools/bulk,size=32Mi\n`);
    await until('the drop refused', () => refusals().some((e) => /drops pool fast, which holds 1 volume/.test(e.message ?? '')));
    assert.equal(await available(h, { pool: 'fast' }), freeBefore, 'the pool serves as before, at its old size');
    assert.equal(await fileHash(file), hash, 'every byte of the volume kept');
    const again = await createVolume(h, 'still-served', 8 * MiB, { parameters: { pool: 'fast' } });
    await h.client.deleteVolume({ volume_id: again.id });

    // A restart with the shrinking entry in place (a DaemonSet rolled by the ConfigMap change):
    // the pool opens at its recorded size, the volume and its bytes are there, the refusal is reported again.
    await profile(`fast=${host}/pools/fast,size=8Mi\nbulk=${host}/pools/bulk,size=32Mi\n`);
    const since = h.log.length;
    await h.restart();
    port = await metricsPort(h, since);
    assert.equal(await available(h, { pool: 'fast' }), freeBefore, 'after the restart: the old size, the volume still counted');
    assert.equal(await available(h, { pool: 'bulk' }), 32 * MiB, 'the pool added while running opens again');
    assert.equal(await fileHash(file), hash, 'every byte of the volume kept across the restart');
    assert.ok(logEntries(h, since).some((e) => e['msg'] === 'pool profiles: change refused at start; the pool opens as it was' && e['pool'] === 'fast'));
    await untilAsync('the refusal metric after the restart', async () => series(PROFILE_METRIC_NAMES.refused, 'fast', 1).test((await httpGet(port, '/metrics')).body));

    // Put back: the refusal clears.
    await profile(`fast=${host}/pools/fast,size=64Mi\nbulk=${host}/pools/bulk,size=32Mi\n`);
    await untilAsync('the refusal metric back at 0', async () => series(PROFILE_METRIC_NAMES.refused, 'fast', 0).test((await httpGet(port, '/metrics')).body));
    await teardown(h, id, 'keep');
    staged.delete(id);
  });
});
