// Limit reports of a real driver against the bench's API server: a dir pool on btrfs says on its Node that its volumes' writers can get past their limits, and names a volume whose writer did; a loop pool says nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { REASON_ESCAPABLE, REASON_ESCAPED } from '../../src/driver/cluster/limit-reports.js';
import { run } from '../../src/sys/exec.js';
import { dirBtrfsFixture } from '../conformance/fixtures.js';
import { ApiCluster, until } from '../helpers/api-cluster.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, fsCap, MiB, stageAndPublish, teardown } from '../driver/support.js';

const api = new ApiCluster({ dirPrefix: 'lode-limits-' });
const { store } = api;
const NODE = 'node-limits';
const skip = process.getuid?.() !== 0 ? 'the driver needs root' : false;

before(async () => {
  await api.start();
  store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
});

after(async () => {
  await api.stop();
});

interface NodeEvent {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

function eventsOf(reason: string): NodeEvent[] {
  return (store.list('Event') as unknown as NodeEvent[]).filter((e) => e.reason === reason && e.involvedObject?.kind === 'Node' && e.involvedObject.name === NODE);
}

/** The driver's flags for API access, with the features that would write other requests off and a refresh every second. */
const apiArgs = (): string[] => ['--kubeconfig', api.kubeconfig, '--node-loss', 'off', '--orphan-check', '0', '--pod-reservations', 'false', '--capacity-refresh', '1'];

test('a dir pool on btrfs: a Warning on the Node names the pool and how its writers get past a volume\'s size; a writer who does is named in a second one', { skip: skip || (await dirBtrfsFixture.unavailable()) || false }, async (t) => {
  const medium = await dirBtrfsFixture.setup(t);
  const h = await DriverHarness.start({ nodeId: NODE, pools: [{ name: 'shared', ...medium.pool }], extraArgs: apiArgs() });
  t.after(async () => {
    await h.cleanup();
    await medium.cleanup();
  });
  await until('the pool\'s Warning', () => eventsOf(REASON_ESCAPABLE).length === 1);
  const [said] = eventsOf(REASON_ESCAPABLE);
  assert.equal(said?.type, 'Warning');
  assert.match(said?.message ?? '', /^pool shared \(dir\): a writer can make a subvolume inside its volume/);

  const cap = fsCap('btrfs');
  const v = await createVolume(h, 'pvc-escapes', 32 * MiB, { cap, parameters: { pool: 'shared' } });
  const { target } = await stageAndPublish(h, v.id, 'escapes', cap);
  // As root here: what matters is a subvolume the volume's limit does not hold (writer-cases.ts runs it unprivileged).
  await run('btrfs', ['subvolume', 'create', path.join(target, 'nested')]);
  // The driver looks every second (--capacity-refresh 1) and puts a subvolume it finds past the
  // volume's limit back under it: on a loaded machine that can come before dd's last blocks,
  // which then meet the limit. Either way the writer got past it first.
  await run('dd', ['if=/dev/zero', `of=${path.join(target, 'nested', 'data')}`, 'bs=1M', 'count=48', 'conv=fsync', 'status=none']).catch((err: unknown) => {
    if (!(err instanceof Error) || !/Disk quota exceeded/.test(err.message)) throw err;
  });
  await until('the volume\'s Warning', () => eventsOf(REASON_ESCAPED).length === 1);
  const [escaped] = eventsOf(REASON_ESCAPED);
  assert.match(escaped?.message ?? '', new RegExp(`^volume ${v.id.replace(/\./g, '\\.')} \\(pvc-escapes\\) in pool shared: .*${v.id.replace(/\./g, '\\.')}/nested`));
  assert.equal(eventsOf(REASON_ESCAPABLE).length, 1, 'folded: one Event per subject, however many rounds');
  await teardown(h, v.id, 'escapes');
});

test('a loop pool: no limit Warning at all', { skip }, async (t) => {
  const h = await DriverHarness.start({ nodeId: NODE, pools: [{ name: 'own', size: '256Mi' }], extraArgs: apiArgs() });
  t.after(() => h.cleanup());
  const before = eventsOf(REASON_ESCAPABLE).length;
  // Two refresh rounds, at least.
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(eventsOf(REASON_ESCAPABLE).filter((e) => e.message?.startsWith('pool own ')).length, 0);
  assert.equal(eventsOf(REASON_ESCAPABLE).length, before);
});
