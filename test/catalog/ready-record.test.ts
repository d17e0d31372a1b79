// A plain create writes its "ready" record while its storage is made, and puts it in place only after: never ready before the storage, a failed allocation leaves no record, an allocation's own additions are kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LoopBackend } from '../../src/backends/loop/loop-backend.js';
import { VolumeCatalog } from '../../src/catalog/volume-catalog.js';
import type { Backend } from '../../src/pool/backend.js';
import { recordsDir, type PoolConfig } from '../../src/pool/pool.js';
import type { VolumeRecord } from '../../src/pool/volume-record.js';
import { TEMP_MARKER } from '../../src/util/atomic-file.js';
import { MiB, record } from '../backends/dir-scenarios.js';

interface RecordFiles {
  /** The record file's state, or undefined when there is none. */
  state: string | undefined;
  /** The states in the temp files beside it. */
  prepared: string[];
}

async function recordFiles(config: PoolConfig, id: string): Promise<RecordFiles> {
  const dir = recordsDir(config);
  const names = await fs.readdir(dir);
  const read = async (name: string) => (JSON.parse(await fs.readFile(path.join(dir, name), 'utf8')) as { state: string }).state;
  const prepared: string[] = [];
  for (const n of names.filter((x) => x.startsWith(`${id}.json${TEMP_MARKER}`))) {
    // A temp file is read once it is whole: it is written before it is fsynced, so an empty one is still being written.
    const text = await fs.readFile(path.join(dir, n), 'utf8');
    if (text.endsWith('\n')) prepared.push((JSON.parse(text) as { state: string }).state);
  }
  return { state: names.includes(`${id}.json`) ? await read(`${id}.json`) : undefined, prepared };
}

/**
 * Waits, while the allocation is held, until the prepared "ready" record is there. Not a speed
 * check: the bound only turns a create that never prepares one into a failure instead of a hang.
 */
async function preparedWhileAllocating(config: PoolConfig, id: string): Promise<RecordFiles> {
  for (let i = 0; i < 600; i++) {
    const files = await recordFiles(config, id);
    if (files.prepared.length > 0) return files;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no "ready" record was prepared while the storage was being made');
}

async function loopPool(t: { after: (fn: () => Promise<void>) => void }) {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-ready-record-'));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const config: PoolConfig = { name: 'quota-pool', backend: 'loop', dir: path.join(root, 'pool'), sizeBytes: 256 * MiB, defaultVolumeBytes: 16 * MiB, directIo: false };
  await fs.mkdir(config.dir, { recursive: true });
  const b = new LoopBackend(config);
  const catalog = await VolumeCatalog.open([b as Backend]);
  return { config, b, catalog, realAllocate: b.allocate.bind(b) };
}

test('a plain create writes its ready record beside the allocation and renames it into place only once the storage exists', async (t) => {
  const { config, b, catalog, realAllocate } = await loopPool(t);
  const r = record(16 * MiB);
  let during: RecordFiles | undefined;
  b.allocate = async (v: VolumeRecord) => {
    during = await preparedWhileAllocating(config, v.id);
    await realAllocate(v);
  };
  await catalog.provision(r);
  assert.deepEqual(during, { state: 'creating', prepared: ['ready'] }, 'while the storage was made the record said creating, its ready version waited beside it');
  assert.deepEqual(await recordFiles(config, r.id), { state: 'ready', prepared: [] }, 'after: ready, no temp file left');
  assert.equal((await fs.stat(b.imagePath(r))).size, 16 * MiB);
  assert.equal(catalog.get(r.id)?.state, 'ready');
});

test('a failed allocation discards the prepared ready record: the create leaves no record and no temp file', async (t) => {
  const { config, b, catalog } = await loopPool(t);
  const r = record(16 * MiB);
  b.allocate = async (v: VolumeRecord) => {
    await preparedWhileAllocating(config, v.id);
    throw new Error('injected: no storage');
  };
  await assert.rejects(catalog.provision(r), /injected: no storage/);
  assert.deepEqual(await recordFiles(config, r.id), { state: undefined, prepared: [] });
  assert.deepEqual((await fs.readdir(recordsDir(config))).filter((n) => n.includes(TEMP_MARKER)), []);
  assert.equal(catalog.get(r.id), undefined);
});

test('what an allocation adds to the record (as LVM adds its device uuid) is in the ready record, not the prepared copy', async (t) => {
  const { config, b, catalog, realAllocate } = await loopPool(t);
  const r = record(16 * MiB);
  b.allocate = async (v: VolumeRecord) => {
    await preparedWhileAllocating(config, v.id);
    await realAllocate(v);
    v.backing = { ...v.backing, dmUuid: 'LVM-made-by-the-allocation' };
  };
  await catalog.provision(r);
  const saved = JSON.parse(await fs.readFile(path.join(recordsDir(config), `${r.id}.json`), 'utf8')) as VolumeRecord;
  assert.equal(saved.state, 'ready');
  assert.deepEqual(saved.backing, { dmUuid: 'LVM-made-by-the-allocation' });
  assert.deepEqual((await fs.readdir(recordsDir(config))).filter((n) => n.includes(TEMP_MARKER)), [], 'the stale prepared copy is removed');
});
