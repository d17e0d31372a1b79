// The orphan check's flags, and its Events against the bench's API server: one per subject, found again by a restarted driver.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { ApiServer } from '../../src/bench/apiserver/server.js';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { RequestCounts } from '../../src/bench/api/request-counts.js';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { connectKube } from '../../src/kube/kube-client.js';
import { EVENT_REFRESH_MS, NodeEvents } from '../../src/driver/orphans/node-events.js';

const dir = mkdtempSync(path.join(tmpdir(), 'lode-orphan-parts-'));
const clock = new VirtualClock();
const store = new ObjectStore(clock);
const runtime = new Runtime(clock);
const stopHold = new AbortController();
const requests: string[] = [];
const server = new ApiServer({ host: '127.0.0.1', port: 0, historyLimit: 100, onRequest: (client, verb, resource) => requests.push(`${client} ${verb} ${resource}`) });
let held: Promise<void>;
let config = '';

before(async () => {
  const base = await server.start();
  server.attach({ store, events: new EventLog(() => clock.now()), clock, external: runtime.external, driverName: 'lode.csi.dev', requests: new RequestCounts() });
  held = runtime.hold(stopHold.signal);
  store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-ev' } });
  config = path.join(dir, 'kubeconfig');
  writeKubeconfig(config, base);
});

after(async () => {
  stopHold.abort();
  await held;
  await server.close();
  rmSync(dir, { recursive: true, force: true });
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
    await assert.rejects(parseDriverFlags([...base, '--delete-orphans'], {}, '1'), /--delete-orphans needs --in-cluster or --kubeconfig/);
    await assert.rejects(parseDriverFlags([...base, '--orphan-grace', '10'], {}, '1'), /needs --in-cluster/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-check', '0', '--delete-orphans'], {}, '1'), /--orphan-check 0 turns it off/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-grace', '0'], {}, '1'), /--orphan-grace "0" must be a whole number of seconds from 1/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--orphan-check', '5m'], {}, '1'), /--orphan-check "5m"/);
  });
});

describe('Events on the Node', () => {
  it('are written once per subject, refreshed only after the refresh interval, and found again by a restarted driver', async () => {
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
    const stored = () => (store.list('Event') as unknown as Array<{ message: string; lastTimestamp: unknown; involvedObject: { name: string } }>).filter((e) => e.message.includes('lv-1'));
    assert.equal(stored().length, 1);
    assert.equal(new Date(String(stored()[0]!.lastTimestamp)).toISOString(), later);
    // A new process knows nothing of the first one's Events: its create is answered 409, and it refreshes that one.
    const restarted = new NodeEvents(kube, 'node-ev');
    assert.equal(await restarted.report('Warning', 'OrphanedVolume', 'lv-1', 'volume lv-1 is an orphan', t0 + 2 * EVENT_REFRESH_MS), true);
    assert.deepEqual(writes().slice(3), ['lode-driver create events', 'lode-driver patch events']);
    assert.equal(stored().length, 1);
    assert.equal(stored()[0]!.involvedObject.name, 'node-ev');
  });
});
