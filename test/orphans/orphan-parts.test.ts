// The orphan check's flags, and its Events against the bench's API server: one per subject, repeats counted as upstream recorders count them, found again by a restarted driver.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { ApiCluster } from '../helpers/api-cluster.js';
import { connectKube } from '../../src/kube/kube-client.js';
import { EVENT_REFRESH_MS, NodeEvents } from '../../src/kube/node-events.js';

const api = new ApiCluster({ historyLimit: 100, dirPrefix: 'lode-orphan-parts-' });
const { store, requests } = api;
let config = '';

before(async () => {
  await api.start();
  store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-ev' } });
  config = api.kubeconfig;
});

after(async () => {
  await api.stop();
});

describe('orphan flags', () => {
  const base = ['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n1', '--pool', `p=${tmpdir()}`];
  it('turn the check on by default with API access only, and refuse what cannot work', async () => {
    const off = await parseDriverFlags(base, {}, '1');
    assert.ok(off !== 'help' && off.config.orphans === undefined);
    const on = await parseDriverFlags([...base, '--kubeconfig', '/k'], {}, '1');
    assert.ok(on !== 'help');
    assert.deepEqual(on.config.orphans, { checkMs: 300_000, graceMs: 3_600_000, delete: false });
    const env = await parseDriverFlags([...base, '--in-cluster'], { LODE_ORPHAN_CHECK: '60', LODE_ORPHAN_GRACE: '7200', LODE_DELETE_ORPHANS: 'true' }, '1');
    assert.ok(env !== 'help');
    assert.deepEqual(env.config.orphans, { checkMs: 60_000, graceMs: 7_200_000, delete: true });
    const zero = await parseDriverFlags([...base, '--in-cluster', '--orphan-check', '0'], {}, '1');
    assert.ok(zero !== 'help' && zero.config.orphans === undefined);
    // Off is what a driver without API access has anyway: the DaemonSet's LODE_ORPHAN_CHECK=0 with API access turned off is no contradiction.
    const offWithoutApi = await parseDriverFlags(base, { LODE_ORPHAN_CHECK: '0' }, '1');
    assert.ok(offWithoutApi !== 'help' && offWithoutApi.config.orphans === undefined);
    await assert.rejects(parseDriverFlags(base, { LODE_ORPHAN_CHECK: '60' }, '1'), /--orphan-check needs --in-cluster or --kubeconfig/);
    await assert.rejects(parseDriverFlags([...base, '--delete-orphans'], {}, '1'), /--delete-orphans needs --in-cluster or --kubeconfig/);
    await assert.rejects(parseDriverFlags([...base, '--orphan-grace', '10'], {}, '1'), /needs --in-cluster/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-check', '0', '--delete-orphans'], {}, '1'), /--orphan-check 0 turns it off/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-grace', '0'], {}, '1'), /--orphan-grace "0" must be a whole number of seconds from 1/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-check', '5m'], {}, '1'), /--orphan-check "5m"/);
  });
});

describe('Events on the Node', () => {
  it('are written once per subject, repeats counted (count, lastTimestamp) only after the refresh interval, a new message counted afresh, and found again by a restarted driver', async () => {
    const kube = await connectKube({ source: { kind: 'kubeconfig', path: config }, callTimeoutMs: 2_000 }, 'node-ev', '1');
    const first = new NodeEvents(kube, 'node-ev');
    const t0 = Date.now();
    assert.equal(await first.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan', t0), true);
    assert.equal(await first.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan', t0 + 1_000), true);
    assert.equal(await first.report('Warning', 'OrphanedVolume', 'lv-2', 'volume lv-2 is an orphan', t0), true);
    const writes = () => requests.filter((r) => /^lode-driver (create|patch) events$/.test(r));
    assert.deepEqual(writes(), ['lode-driver create events', 'lode-driver create events']);
    await first.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan', t0 + EVENT_REFRESH_MS);
    assert.deepEqual(writes().slice(2), ['lode-driver patch events']);
    const later = new Date(t0 + EVENT_REFRESH_MS).toISOString();
    const stored = () => (store.list('Event') as unknown as Array<{ message: string; count: number; firstTimestamp: unknown; lastTimestamp: unknown; involvedObject: { name: string } }>).filter((e) => e.message.includes('lv-1'));
    assert.equal(stored().length, 1);
    assert.equal(new Date(String(stored()[0]!.lastTimestamp)).toISOString(), later);
    // The repeat is counted, as the upstream recorder counts one: count 2, first time kept.
    assert.equal(stored()[0]!.count, 2);
    assert.equal(new Date(String(stored()[0]!.firstTimestamp)).toISOString(), new Date(t0).toISOString());
    // A new process knows nothing of the first one's Events: its create is answered 409, it
    // reads where the count stands, and counts on from there.
    const restarted = new NodeEvents(kube, 'node-ev');
    assert.equal(await restarted.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan', t0 + 2 * EVENT_REFRESH_MS), true);
    assert.deepEqual(writes().slice(3), ['lode-driver create events', 'lode-driver patch events']);
    assert.equal(stored().length, 1);
    assert.equal(stored()[0]!.involvedObject.name, 'node-ev');
    assert.equal(stored()[0]!.count, 3);
    // Another message is another Event to the recorder: written at once, its count from 1.
    assert.equal(await restarted.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan, 2 GiB', t0 + 2 * EVENT_REFRESH_MS + 1_000), true);
    assert.deepEqual(stored().map((e) => [e.message, e.count]), [['volume lv-1 is an orphan, 2 GiB', 1]]);
  });
});
