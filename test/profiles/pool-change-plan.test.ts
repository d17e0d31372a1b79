// Pool profiles' own logic: which entry a node takes, what a new pool list may change on a running driver, and what a restart keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entryNames, PROFILE_PREFIX } from '../../src/cli/pool-config.js';
import { planPoolChange, type PoolHolding } from '../../src/driver/cluster/profiles/pool-change-plan.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { keepRefused } from '../../src/driver/cluster/profiles/start-choice.js';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const EMPTY: PoolHolding = { volumes: 0, snapshots: 0, quarantined: 0, allocatedBytes: 0 };
const ONE: PoolHolding = { volumes: 1, snapshots: 0, quarantined: 0, allocatedBytes: 16 * 2 ** 20 };
const pools = (...specs: string[]) => specs.map((s) => parsePoolSpec(s));

test('a node takes its own entry, then its profile, then default; a profile key is a valid ConfigMap key for every label value', () => {
  assert.deepEqual(entryNames('worker-1', 'm5.large'), ['worker-1', 'profile.m5.large', 'default']);
  assert.deepEqual(entryNames('worker-1', undefined), ['worker-1', 'default']);
  // Label values are (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?, at most 63; ConfigMap keys [-._a-zA-Z0-9]+, at most 253.
  for (const value of ['m5.large', 'Standard_D4s_v5', 'a', 'x'.repeat(63)]) {
    assert.match(PROFILE_PREFIX + value, /^[-._a-zA-Z0-9]{1,253}$/);
  }
});

test('new pools are added; a drop, move or shrink of a pool holding volumes is refused; the rest waits for a restart', () => {
  const current = pools('fast=/p/fast,size=64Mi', 'bulk=/p/bulk,size=1Gi', 'idle=/p/idle,size=1Gi');
  const holding = (p: string) => (p === 'idle' ? EMPTY : ONE);
  assert.deepEqual(planPoolChange(current, current, holding), { add: [], refused: [], deferred: [] }, 'no change, nothing to do');

  const grown = planPoolChange(current, pools('fast=/p/fast,size=64Mi', 'bulk=/p/bulk,size=1Gi', 'idle=/p/idle,size=1Gi', 'new=/p/new,size=8Mi'), holding);
  assert.deepEqual(grown.add.map((p) => p.name), ['new']);
  assert.deepEqual(grown.refused, []);

  const shrink = planPoolChange(current, pools('fast=/p/fast,size=8Mi', 'bulk=/p/bulk,size=1Gi', 'idle=/p/idle,size=1Mi'), holding);
  assert.deepEqual(shrink.refused.map((r) => r.pool), ['fast']);
  assert.match(shrink.refused[0]!.reason, /shrinks pool fast from 67108864 bytes to 8388608 bytes, and it holds 1 volume\(s\), 16777216 bytes/);
  assert.deepEqual(shrink.deferred.map((r) => r.pool), ['idle'], 'an empty pool may shrink, at the next start');

  const unsized = planPoolChange(current, pools('fast=/p/fast', 'bulk=/p/bulk,size=1Gi', 'idle=/p/idle,size=1Gi'), holding);
  assert.match(unsized.refused[0]?.reason ?? '', /shrinks pool fast from 67108864 bytes to its filesystem/, 'losing its size is a shrink too');

  const dropped = planPoolChange(current, pools('fast=/p/fast,size=64Mi'), holding);
  assert.deepEqual(dropped.refused.map((r) => r.pool), ['bulk']);
  assert.match(dropped.refused[0]!.reason, /drops pool bulk, which holds 1 volume/);
  assert.deepEqual(dropped.deferred.map((r) => r.pool), ['idle']);

  const moved = planPoolChange(current, pools('fast=/q/fast,size=64Mi', 'bulk=/p/bulk,size=1Gi,backend=dir', 'idle=/p/idle,size=1Gi'), holding);
  assert.deepEqual(moved.refused.map((r) => r.pool), ['fast', 'bulk']);

  const bigger = planPoolChange(current, pools('fast=/p/fast,size=128Mi,max-volume-size=8Mi', 'bulk=/p/bulk,size=1Gi', 'idle=/p/idle,size=1Gi'), holding);
  assert.deepEqual(bigger.refused, []);
  assert.deepEqual(bigger.deferred.map((r) => r.pool), ['fast'], 'growth and other options: at the next start');

  const overlap = planPoolChange(current, [...current, ...pools('inner=/p/fast/inner')], holding);
  assert.deepEqual(overlap.add, [], 'a new pool inside an open one is not added');
  assert.match(overlap.deferred[0]?.reason ?? '', /overlaps pool fast/);
});

test('at start, a pool of the last run that the new entry drops or shrinks while it holds records opens as it was; empty ones follow the entry', async (t) => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-keep-refused-'));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const [full, empty, gone] = ['full', 'empty', 'gone'].map((n) => path.join(root, n));
  await fs.mkdir(path.join(full!, 'volumes'), { recursive: true });
  await fs.writeFile(path.join(full!, 'volumes', 'lv-1.json'), '{}');
  await fs.writeFile(path.join(full!, 'volumes', 'lv-1.img'), '');
  await fs.mkdir(path.join(empty!, 'volumes'), { recursive: true });
  const previous = pools(`full=${full},size=64Mi`, `empty=${empty},size=64Mi`, `gone=${gone},size=64Mi`);
  assert.deepEqual(await keepRefused(undefined, previous), previous, 'nothing recorded: the entry as it is');
  const shrunk = await keepRefused(previous, pools(`full=${full},size=8Mi`, `empty=${empty},size=8Mi`));
  assert.deepEqual(shrunk.map((p) => [p.name, p.sizeBytes]), [['full', 64 * 2 ** 20], ['empty', 8 * 2 ** 20]], 'the pool with a record keeps its size; the empty one shrinks; a directory that is gone holds nothing');
  const dropped = await keepRefused(previous, pools(`other=${root}/other,size=8Mi`, `inner=${full}/inner,size=8Mi`));
  assert.deepEqual(dropped.map((p) => p.name), ['other', 'full'], 'dropped but holding: kept; a new pool inside it waits');
  const snapshotOnly = path.join(root, 'snap');
  await fs.mkdir(path.join(snapshotOnly, 'snapshots'), { recursive: true });
  await fs.writeFile(path.join(snapshotOnly, 'snapshots', 'sn-1.json'), '{}');
  assert.deepEqual((await keepRefused(pools(`snap=${snapshotOnly}`), [])).map((p) => p.name), ['snap'], 'a snapshot record holds the pool too');
});
