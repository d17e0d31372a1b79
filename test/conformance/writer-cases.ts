// Conformance of a volume's limit against its own writers: whatever a writer with no capability makes inside, it gets no more than its volume's size onto the pool, or the pool says it can and catches what can be caught.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { recordedProjectId } from '../../src/backends/dir/project-quota-method.js';
import type { VolumeRecord } from '../../src/pool/volume-record.js';
import { subvolumeId } from '../../src/sys/btrfs.js';
import { ExecError, run } from '../../src/sys/exec.js';
import { createVolume, fsCap, httpGet, logEntries, metricsPort, MiB, stageAndPublish, teardown, usage } from '../driver/support.js';
import { assertNothingLeft, POOL, snapshot, startDriver, type Conformance } from './checks.js';
import type { BackendFixture } from './fixture.js';
import { hasCommand } from './fixtures.js';

type Guard = (body: (t: TestContext) => Promise<void>) => (t: TestContext) => Promise<void>;

/** A pod's process as a restricted pod runs it: uid and gid 65534, no supplementary groups, every capability dropped for good. */
const WRITER = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--'];

interface Outcome {
  ok: boolean;
  out: string;
}

async function asWriter(cmd: string, args: readonly string[]): Promise<Outcome> {
  try {
    const r = await run('setpriv', [...WRITER, cmd, ...args]);
    return { ok: true, out: `${r.stdout}${r.stderr}`.trim() };
  } catch (err) {
    if (err instanceof ExecError) return { ok: false, out: err.message };
    throw err;
  }
}

/** Writes `mib` MiB of zeros to `file` as the writer (at `seekMiB` into it, keeping what is there); a refusal part-way is an outcome, not an error. */
const writerDd = (file: string, mib: number, seekMiB = 0): Promise<Outcome> =>
  asWriter('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${mib}`, `seek=${seekMiB}`, 'conv=notrunc,fsync', 'status=none']);

/** Bytes the filesystem holding `dir` has in use, once written data has reached it. */
async function usedBytes(dir: string): Promise<number> {
  await run('sync', ['-f', dir]);
  const s = await fs.statfs(dir);
  return (s.blocks - s.bfree) * s.bsize;
}

/** Lets the writer reach `target` (kubelet does it with fsGroup and the pod directory's modes) and write at its root. */
async function openToWriter(root: string, target: string): Promise<void> {
  for (let dir = path.dirname(target); dir.startsWith(root) && dir !== path.dirname(root); dir = path.dirname(dir)) {
    const st = await fs.stat(dir);
    await fs.chmod(dir, st.mode | 0o011);
  }
  await fs.chmod(target, 0o777);
}

/** Removes what the writer made under `target`; subvolumes it made stay (it may not delete them), emptied. */
async function writerCleans(target: string): Promise<void> {
  await asWriter('find', [target, '-mindepth', '1', '-type', 'f', '-delete']);
}

async function metric(port: number, name: string): Promise<number | undefined> {
  const { body } = await httpGet(port, '/metrics');
  const line = body.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`pool="${POOL}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** 16 MiB, or the pool's minimum for the case's filesystem where that is more. */
async function smallSize(c: Conformance): Promise<number> {
  const res = await c.h.client.getCapacity({ parameters: { pool: POOL, fsType: c.fsType } });
  return Math.max(16 * MiB, Math.ceil(Number(res.minimum_volume_size?.value ?? 0) / MiB) * MiB);
}

/** The quota project id the driver recorded for the volume (XFS and ext4 pools), read from its record file. */
async function projectIdOfVolume(c: Conformance, volumeId: string): Promise<number | undefined> {
  return recordedProjectId(JSON.parse(await fs.readFile(path.join(c.poolDir, 'volumes', `${volumeId}.json`), 'utf8')) as VolumeRecord);
}

/** Sets the project id of `file` as the writer, in a user namespace of its own when `inUserNamespace`. */
const writerChproj = (file: string, id: number, inUserNamespace = false): Promise<Outcome> =>
  inUserNamespace ? asWriter('unshare', ['--user', 'xfs_io', '-c', `chproj ${id}`, file]) : asWriter('xfs_io', ['-c', `chproj ${id}`, file]);

async function projectIdOf(file: string): Promise<number | undefined> {
  const out = await run('xfs_io', ['-c', 'lsproj', file]).then((r) => r.stdout, () => '');
  const m = /projid = (\d+)/.exec(out);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

export function registerWriterCases(fixture: BackendFixture, guarded: Guard): void {
  const expected = fixture.capabilities.writers;

  test(`writers (${expected}): a writer with no capability gets no more than its volume's size onto the pool by nested subvolumes and their snapshots, project ids, sparse and preallocated files, xattrs, reflinks or hard links into a neighbour; where the filesystem lets it, the pool says so${expected === 'caught' ? ' and catches it' : ''}`, guarded(async (t) => {
    const c = await startDriver(t, fixture, { extraArgs: ['--metrics-address', '127.0.0.1:0'] });
    const before = await snapshot(c);
    const port = await metricsPort(c.h);
    const cap = fsCap(c.fsType);
    // Small, so that every attempt's writes of twice the size stay cheap in the VM too.
    const size = await smallSize(c);
    const mib = size / MiB;
    const a = await createVolume(c.h, 'conf-writer', size, { cap });
    const b = await createVolume(c.h, 'conf-writer-neighbour', size, { cap });
    const pa = await stageAndPublish(c.h, a.id, 'writer', cap);
    const pb = await stageAndPublish(c.h, b.id, 'writer-neighbour', cap);
    await openToWriter(c.h.root, pa.target);
    await openToWriter(c.h.root, pb.target);
    const A = pa.target;
    const B = pb.target;

    // What the pool says of itself: at start-up in its log, and in its metrics.
    const escapable = (await metric(port, 'lode_pool_limit_escapable')) === 1;
    assert.equal(escapable, expected !== 'bounded', `lode_pool_limit_escapable says ${escapable ? '' : 'not '}escapable; the fixture expects ${expected}`);
    const said = logEntries(c.h).find((e) => e['msg'] === 'a volume\'s writers can get past its limit on this pool\'s filesystem');
    assert.equal(said !== undefined, escapable, 'the log says so at start-up exactly when the metric does');
    const declares = fixture.capabilities.declares;
    if (declares !== undefined) assert.match(String(said?.['how']), declares, 'the pool declares the way its filesystem has');

    // A directory volume shares the pool's filesystem: what any attempt takes shows there. A
    // block volume is a filesystem of its own, where it shows.
    const shared = !fixture.capabilities.rawBlock;
    const measured = shared ? c.poolDir : A;
    const slack = Math.max(8 * MiB, size / 4);
    const escapes: Array<{ kind: 'other' | 'project' | 'subvolume'; what: string }> = [];
    /**
     * Runs one attempt; true when it put more onto the pool than the volumes it wrote to may
     * hold (`volumes` of them). It starts from what the last one left, and by default cleans up.
     */
    const attempt = async (what: string, body: () => Promise<void>, o: { kind?: 'other' | 'project' | 'subvolume'; clean?: boolean; volumes?: number } = {}): Promise<boolean> => {
      const start = await usedBytes(measured);
      await body();
      const took = (await usedBytes(measured)) - start;
      if (o.clean ?? true) await writerCleans(A);
      const escaped = took > (o.volumes ?? 1) * size + slack;
      if (escaped) escapes.push({ kind: o.kind ?? 'other', what: `${what}: ${took} bytes for ${o.volumes ?? 1} volume(s) of ${size} bytes` });
      return escaped;
    };

    // Bounded on every backend: the kernel counts allocated blocks and xattrs, whatever the file's apparent size.
    assert.equal(await attempt('sparse file', async () => {
      await asWriter('truncate', ['-s', String(4 * size), path.join(A, 'sparse')]);
      for (let i = 0; i < 4; i++) await writerDd(path.join(A, 'sparse'), Math.ceil(mib / 2), i * mib);
    }), false, 'writes scattered over a sparse file stop at the volume\'s size');
    assert.equal(await attempt('preallocation', async () => {
      const r = await asWriter('fallocate', ['-l', String(2 * size), path.join(A, 'prealloc')]);
      assert.equal(r.ok, false, 'preallocating twice the volume\'s size is refused');
    }), false);
    if (await hasCommand('python3')) {
      assert.equal(await attempt('xattrs', async () => {
        // One process: a file and a 3 KiB xattr per 4 KiB block, until the filesystem refuses.
        const script = 'import os,sys\nd=sys.argv[1]\nv=b"x"*3072\nfor i in range(int(sys.argv[2])):\n  p=os.path.join(d,"x%d"%i)\n  open(p,"w").close()\n  os.setxattr(p,"user.lode",v)\n';
        await asWriter('python3', ['-c', script, A, String(2 * size / 4096)]);
      }), false, 'xattrs are held to the volume\'s size too');
    }
    const link = await asWriter('bash', ['-c', `: > '${A}/linked' && ln '${A}/linked' '${B}/linked'`]);
    assert.equal(link.ok, false, `a hard link from one volume into another is refused (it would charge one volume for the other's file): ${link.out}`);
    assert.equal(await attempt('reflink into the neighbour', async () => {
      await writerDd(path.join(A, 'shared'), Math.floor(mib / 2));
      await asWriter('cp', ['--reflink=always', path.join(A, 'shared'), path.join(B, 'shared')]);
      await asWriter('rm', ['-f', path.join(A, 'shared')]);
      await writerDd(path.join(A, 'after'), 2 * mib);
    }, { volumes: 2 }), false, 'a reflink into the neighbour gives the writer no room past both volumes\' sizes');
    await asWriter('rm', ['-f', path.join(B, 'shared'), path.join(B, 'linked')]);

    // Project ids (XFS and ext4 quota directories): the owner of a file may change its id.
    const neighbourProject = await projectIdOfVolume(c, b.id);
    const projectEscapes: string[] = [];
    for (const [what, id] of [['project id 0', 0], ['the neighbour\'s project id', neighbourProject]] as const) {
      if (id === undefined) continue;
      const file = path.join(A, `project-${id}`);
      if (await attempt(what, async () => {
        await asWriter('touch', [file]);
        if ((await writerChproj(file, id)).ok) await writerDd(file, 2 * mib);
      }, { kind: 'project' })) projectEscapes.push(what);
    }
    if (neighbourProject !== undefined) {
      // What docs/backends.md says closes it: a pod in a user namespace (hostUsers: false).
      const file = path.join(A, 'in-userns');
      await asWriter('touch', [file]);
      const own = await projectIdOf(file);
      assert.equal((await writerChproj(file, 0, true)).ok, false, 'inside a user namespace the owner cannot change a file\'s project id');
      assert.equal(await projectIdOf(file), own);
      await writerCleans(A);
    }

    // Subvolumes (btrfs): a writer may make one, naming any qgroup (where there are groups,
    // simple quotas: the neighbour's, for its space and the writer's data), and snapshot one it
    // made. Made before the volume is full, which would refuse the subvolume's own metadata.
    const nested: string[] = [];
    /** The subvolumes the survey must find: one in another volume's group, and any that took the writer past its size. */
    const mustCatch: string[] = [];
    if (c.fsType === 'btrfs' && shared) {
      const into = path.join(A, 'sub-in-neighbour');
      if ((await asWriter('btrfs', ['subvolume', 'create', '-i', `1/${await subvolumeId(B)}`, into])).ok) {
        nested.push(into);
        mustCatch.push(into);
        await attempt('a subvolume in the neighbour\'s group', () => writerDd(path.join(into, 'data'), mib - 4).then(() => undefined), { kind: 'subvolume', clean: false });
      }
      const sub = path.join(A, 'sub');
      if ((await asWriter('btrfs', ['subvolume', 'create', sub])).ok) {
        nested.push(sub);
        const snap = path.join(A, 'sub-snapshot');
        if ((await asWriter('btrfs', ['subvolume', 'snapshot', sub, snap])).ok) nested.push(snap);
        if (await attempt('a subvolume made inside the volume', () => writerDd(path.join(sub, 'data'), 2 * mib).then(() => undefined), { kind: 'subvolume', clean: false })) mustCatch.push(sub);
        if (nested.includes(snap) && await attempt('a snapshot of it', () => writerDd(path.join(snap, 'more'), 2 * mib).then(() => undefined), { kind: 'subvolume', clean: false })) mustCatch.push(snap);
      }
    }

    // Only the way the pool declares gets past the size.
    const declared = { bounded: 'none', said: 'project', caught: 'subvolume' }[expected];
    assert.deepEqual(escapes.filter((e) => e.kind !== declared).map((e) => e.what), [], 'no way past the volume\'s size but the one the pool declares');
    if (expected === 'said') {
      // Nothing on the filesystem tells which files left which volume: said, not caught. The
      // declaration must stay true: if the kernel ever refuses these, this says so.
      assert.ok(projectEscapes.length > 0, 'the escape the pool declares happens');
    } else if (expected === 'caught') {
      assert.ok(mustCatch.length > 0, `the writer got past its limit with a subvolume (made: ${nested.join(', ')})`);
      // The next refresh (GetCapacity runs one) catches every escape, closes it and says so.
      await c.h.client.getCapacity({ parameters: { pool: POOL } });
      assert.ok(((await metric(port, 'lode_volume_limit_escapes_total')) ?? 0) >= 1, 'the escape is counted');
      const stats = await c.h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: A });
      assert.equal(stats.volume_condition?.abnormal, true, 'the volume whose writer escaped is abnormal');
      // It names each subvolume by its path in the pool (the writer's mount is only a view of it).
      for (const n of mustCatch) assert.ok(stats.volume_condition?.message.includes(`${a.id}/${path.basename(n)}`), `the condition names ${n}: ${stats.volume_condition?.message}`);
      await run('btrfs', ['filesystem', 'sync', A]);
      const held = Number((await run('du', ['-s', '--block-size=1', A])).stdout.split(/\s/)[0]);
      const reported = usage(await c.h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: A }), 'BYTES').used;
      assert.ok(reported >= held - slack, `the volume's usage counts its subvolumes: ${reported} reported, ${held} held`);
      for (const n of nested) {
        const more = await writerDd(path.join(n, 'after-caught'), 1);
        assert.equal(more.ok, false, `once caught, ${n} takes nothing more`);
      }
      assert.ok(logEntries(c.h).some((e) => e['msg'] === 'a volume\'s writer got past its limit; put back under it' && e['volume'] === a.id), 'the driver logs the escape');
    }

    // The neighbour keeps its whole size: nothing of the writer's is charged to it (once the
    // writer's files are gone, for the escapes that are only said).
    await writerCleans(B);
    const r = await writerDd(path.join(B, 'own'), mib - Math.ceil(slack / MiB));
    assert.equal(r.ok, true, `the neighbour still takes ${mib - Math.ceil(slack / MiB)} MiB of its ${mib}: ${r.out}`);

    await teardown(c.h, a.id, 'writer');
    await teardown(c.h, b.id, 'writer-neighbour');
    await assertNothingLeft(c, before);
  }));
}
