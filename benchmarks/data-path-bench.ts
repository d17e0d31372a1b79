// Data-path benchmark: the same fio jobs inside a published volume of each backend and on the pool's own medium.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { run } from '../src/sys/exec.js';
import { listLoopDevices } from '../src/sys/loop.js';
import { DriverHarness, type PoolSpec, mountCap } from '../test/helpers/driver-harness.js';
import { parseFioJson, type FioResult } from './fio-json.js';
import { BtrfsMedium, HOST_MOUNTS } from '../src/bench/nodes/btrfs-medium.js';
import { btrfsToolsLifecycle, GiB, lodeLifecycle, median, toolsLifecycle } from './lifecycle.js';

/**
 * The backends measured, one entry each. A new backend is one more entry: its pool options, how
 * to say what data path its volumes really got, and the by-hand tool sequence its control path
 * is compared with. Its pool directory must be on the filesystem it is meant to be measured on
 * (the medium column is a directory on that same filesystem).
 */
interface Backend {
  /** Column heading. */
  label: string;
  pool: PoolSpec;
  /** The filesystem its volumes are asked for ('' = the pool's own, for a dir pool). */
  fsType: string;
  /** Prepares the pool's own disk (a dir pool's btrfs) under `workDir`; returns the pool directory on it. */
  medium?: { prepare(workDir: string): Promise<string>; release(): Promise<void> };
  /** The directory on the pool's filesystem where the medium's jobs run (default: beside the pool directory). */
  mediumDir?(poolDir: string): string;
  /** What the kernel actually gave the published volume, e.g. whether a loop device runs direct I/O. */
  dataPath(poolDir: string): Promise<string>;
  /** The same system work as Lode's lifecycle, done with the tools by hand in `dir`; milliseconds. */
  toolsLifecycle(dir: string, i: number): Promise<number>;
}

async function loopDataPath(poolDir: string): Promise<string> {
  const devs = (await listLoopDevices()).filter((d) => d.backingFile.startsWith(poolDir + '/'));
  const states = await Promise.all(devs.map(async (d) => {
    const dio = (await fs.readFile(`/sys/block/${path.basename(d.device)}/loop/dio`, 'utf8').catch(() => '?')).trim();
    return `${d.device} dio=${dio}`;
  }));
  return states.join(', ') || 'no loop device found';
}

/** The dir pool's disk: a btrfs with quotas on, in a sparse image on the same host filesystem as the loop pools. */
function btrfsMedium(poolBytes: number): NonNullable<Backend['medium']> {
  let medium: BtrfsMedium | undefined;
  return {
    async prepare(workDir) {
      medium = new BtrfsMedium(path.join(workDir, 'btrfs.img'), path.join(workDir, 'btrfs'), poolBytes, HOST_MOUNTS);
      await medium.ensure();
      await fs.mkdir(path.join(medium.mountPoint, 'pool'));
      return path.join(medium.mountPoint, 'pool');
    },
    async release() {
      await medium?.release();
    },
  };
}

const BACKENDS: Backend[] = [
  {
    label: 'dir (btrfs qgroup)',
    pool: { name: 'dir-btrfs', size: '6Gi', extra: 'backend=dir' },
    fsType: '',
    medium: btrfsMedium(6 * GiB),
    // A plain directory of the same btrfs, beside the pool (and outside its volumes).
    mediumDir: (poolDir) => path.join(path.dirname(poolDir), 'medium'),
    dataPath: async () => 'native (a subvolume bind-mounted)',
    toolsLifecycle: (dir, i) => btrfsToolsLifecycle(dir, i),
  },
  {
    label: 'loop, direct I/O',
    pool: { name: 'loop-dio', size: '6Gi', extra: 'direct-io=on' },
    fsType: 'ext4',
    dataPath: loopDataPath,
    toolsLifecycle: (dir, i) => toolsLifecycle(dir, i, true, true),
  },
  {
    label: 'loop, buffered',
    pool: { name: 'loop-buf', size: '6Gi', extra: 'direct-io=off' },
    fsType: 'ext4',
    dataPath: loopDataPath,
    toolsLifecycle: (dir, i) => toolsLifecycle(dir, i, true, false),
  },
];

/** The files the jobs work on (4 KiB jobs, sequential job); each written in full once per target before any measurement. */
const FILE_SIZE = '256M';
const SEQ_SIZE = '1G';
const LAYOUT: ReadonlyArray<readonly [string, string]> = [['bench.dat', FILE_SIZE], ['seq.dat', SEQ_SIZE]];
const VOLUME_BYTES = 2 * GiB;

interface Job {
  name: string;
  title: string;
  unit: 'IOPS' | 'MB/s';
  args(dir: string, runtimeS: number): string[];
  figure(r: FioResult): number;
}

const JOBS: Job[] = [
  {
    name: 'randwrite-fsync',
    title: '4 KiB random write, fsync after each, QD1',
    unit: 'IOPS',
    args: (dir, rt) => [`--filename=${path.join(dir, 'bench.dat')}`, `--size=${FILE_SIZE}`, '--rw=randwrite', '--bs=4k', '--fsync=1',
      '--iodepth=1', '--ioengine=psync', '--time_based', `--runtime=${rt}`],
    figure: (r) => r.write.iops,
  },
  {
    name: 'randread-direct',
    title: '4 KiB random read, direct, QD16',
    unit: 'IOPS',
    args: (dir, rt) => [`--filename=${path.join(dir, 'bench.dat')}`, `--size=${FILE_SIZE}`, '--rw=randread', '--bs=4k', '--direct=1',
      '--iodepth=16', '--ioengine=libaio', '--time_based', `--runtime=${rt}`],
    figure: (r) => r.read.iops,
  },
  {
    // Sized, not time-based: a timed buffered job rewrites the same pages in the page cache and
    // measures memory, not the path to the disk. It overwrites a file written in full beforehand,
    // as the 4 KiB jobs do: a fresh file each run would add the host filesystem's allocation and,
    // where it is mounted with discard, a discard of the last run's file landing on whatever
    // job runs next.
    name: 'seqwrite',
    title: '1 MiB sequential write, buffered, fsync at end',
    unit: 'MB/s',
    args: (dir) => [`--filename=${path.join(dir, 'seq.dat')}`, `--size=${SEQ_SIZE}`, '--rw=write', '--bs=1M', '--end_fsync=1',
      '--ioengine=psync'],
    figure: (r) => r.write.bwBytes / 1e6,
  },
];

/** Where a job runs: the medium (a directory next to the pools) or a published volume. */
interface Target {
  label: string;
  dir: string;
  /** For a volume: the target index of its medium, for the ratio. */
  mediumIndex?: number;
}

const abort = new AbortController();

async function fio(name: string, args: string[], runtimeS: number): Promise<FioResult> {
  const { stdout } = await run('fio', [`--name=${name}`, '--output-format=json', ...args], { timeoutMs: (runtimeS + 120) * 1000, signal: abort.signal });
  return parseFioJson(stdout);
}

async function fsDescription(dir: string): Promise<string> {
  const { stdout } = await run('findmnt', ['-n', '-o', 'FSTYPE,SOURCE', '--target', dir]);
  return stdout.trim().replace(/\s+/, ' on ');
}

interface Published { id: string; staging: string; target: string }

/** Creates, stages and publishes a volume on `pool`, listing it in `taken` as soon as it exists so that cleanup finds it. */
async function publish(h: DriverHarness, pool: string, fsType: string, taken: Published[]): Promise<Published> {
  const tag = `fio-${pool}`;
  const staging = h.stagingPath(tag);
  const target = h.targetPath(tag);
  await fs.mkdir(path.dirname(target), { recursive: true });
  const cap = mountCap(fsType);
  const v = await h.client.createVolume({
    name: tag, capacity_range: { required_bytes: VOLUME_BYTES }, volume_capabilities: [cap], parameters: { pool },
  });
  const id = v.volume?.volume_id ?? '';
  const pub = { id, staging, target };
  taken.push(pub);
  await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: cap });
  await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap });
  return pub;
}

/** Takes a volume down again; each step is tried even when an earlier one failed (e.g. after Ctrl-C). */
async function unpublish(h: DriverHarness, p: Published): Promise<void> {
  const steps = [
    () => h.client.nodeUnpublishVolume({ volume_id: p.id, target_path: p.target }),
    () => h.client.nodeUnstageVolume({ volume_id: p.id, staging_target_path: p.staging }),
    () => h.client.deleteVolume({ volume_id: p.id }),
  ];
  for (const step of steps) await step().catch((err: unknown) => console.error(`  cleanup of ${p.id}: ${(err as Error).message}`));
}

interface Stats { min: number; median: number; max: number }

function stats(xs: number[]): Stats {
  return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}

function fmt(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}

function fmtStats(s: Stats): string {
  return `${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})`;
}

/** Control path, per backend: Lode's whole lifecycle over CSI against the same tools by hand, backends interleaved. */
async function lifecycleRatios(h: DriverHarness, runs: number): Promise<void> {
  console.log(`\nControl path: 1 GiB volume (ext4 on loop pools, the pool's own filesystem on dir pools), create -> stage -> publish -> unpublish -> unstage -> delete (median of ${runs})`);
  const rows = await Promise.all(BACKENDS.map(async (b) => ({
    b, rawDir: await fs.mkdtemp(path.join(path.dirname(h.poolDir(b.pool.name)), 'raw-')), lode: [] as number[], tools: [] as number[],
  })));
  for (const { b, rawDir } of rows) {
    // Warm-up of both: first calls on this pool, first tool runs on this directory.
    await b.toolsLifecycle(rawDir, 999);
    await lodeLifecycle(h, 999, b.pool.name, b.fsType);
  }
  for (let i = 0; i < runs; i++) {
    for (const { b, rawDir, lode, tools } of rows) {
      abort.signal.throwIfAborted();
      tools.push(await b.toolsLifecycle(rawDir, i));
      lode.push(await lodeLifecycle(h, i, b.pool.name, b.fsType));
    }
  }
  console.log('| backend | tools by hand | Lode over CSI | ratio |');
  console.log('|---|---|---|---|');
  for (const { b, rawDir, lode, tools } of rows) {
    await fs.rm(rawDir, { recursive: true, force: true });
    console.log(`| ${b.label} | ${median(tools).toFixed(1)} ms | ${median(lode).toFixed(1)} ms | ${(median(lode) / median(tools)).toFixed(2)}x |`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      repeats: { type: 'string', default: '4' },
      runtime: { type: 'string', default: '4' },
      'lifecycle-runs': { type: 'string', default: '7' },
      // The control path alone (no fio jobs): the loop and dir lifecycle ratios in a minute or so.
      'lifecycle-only': { type: 'boolean', default: false },
    },
  });
  const repeats = Number(values.repeats);
  const runtimeS = Number(values.runtime);
  const lifecycleRuns = Number(values['lifecycle-runs']);
  if (![repeats, runtimeS, lifecycleRuns].every((n) => Number.isInteger(n) && n > 0)) {
    throw new Error('--repeats, --runtime and --lifecycle-runs take positive whole numbers');
  }
  const lifecycleOnly = values['lifecycle-only'];
  if (!lifecycleOnly) {
    await run('fio', ['--version']).catch(() => {
      throw new Error('fio is not installed (Debian package fio; `npm run bench` installs it when missing)');
    });
  }
  process.once('SIGINT', () => {
    process.exitCode = 130;
    abort.abort(new Error('interrupted'));
  });

  const started = Date.now();
  const mediaDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-bench-media-'));
  const pools: PoolSpec[] = [];
  for (const b of BACKENDS) pools.push(b.medium ? { ...b.pool, dir: await b.medium.prepare(mediaDir) } : b.pool);
  const h = await DriverHarness.start({ pools }).catch(async (err: unknown) => {
    for (const b of BACKENDS) await b.medium?.release();
    throw err;
  });
  const published: Published[] = [];
  try {
    const fioVersion = lifecycleOnly ? 'control path only' : (await run('fio', ['--version'])).stdout.trim();
    console.log(`Lode data-path benchmark (${os.cpus().length} cores, ${fioVersion}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
    await lifecycleRatios(h, lifecycleRuns);
    if (lifecycleOnly) return;

    // One medium per filesystem the pools are on, so that every ratio is against the same disk.
    const targets: Target[] = [];
    const mediumByDev = new Map<number, number>();
    const volumeTargets: Target[] = [];
    for (const b of BACKENDS) {
      const poolDir = h.poolDir(b.pool.name);
      const dev = (await fs.stat(poolDir)).dev;
      let mediumIndex = mediumByDev.get(dev);
      if (mediumIndex === undefined) {
        const dir = b.mediumDir?.(poolDir) ?? path.join(path.dirname(poolDir), `medium-${b.pool.name}`);
        await fs.mkdir(dir);
        if ((await fs.stat(dir)).dev !== dev) throw new Error(`${dir} is not on the filesystem of pool ${b.pool.name} (${poolDir})`);
        mediumIndex = targets.length;
        mediumByDev.set(dev, mediumIndex);
        targets.push({ label: 'medium', dir });
        console.log(`\nmedium: ${dir} (${await fsDescription(dir)})`);
      }
      const p = await publish(h, b.pool.name, b.fsType, published);
      volumeTargets.push({ label: b.label, dir: p.target, mediumIndex });
      console.log(`${b.label}: pool ${poolDir}, volume ${p.id} (${b.fsType || 'the pool\'s filesystem'}, ${VOLUME_BYTES / GiB} GiB) published at ${p.target}; ${await b.dataPath(poolDir)}`);
    }
    targets.push(...volumeTargets);

    for (const t of targets) {
      for (const [file, size] of LAYOUT) {
        await fio('layout', [`--filename=${path.join(t.dir, file)}`, `--size=${size}`, '--rw=write', '--bs=1M', '--end_fsync=1'], 60);
      }
    }

    // results[job][target] = one figure per repeat, in repeat order.
    const results = JOBS.map(() => targets.map((): number[] => []));
    console.log(`\n${repeats} repeats x ${JOBS.length} jobs x ${targets.length} targets, ${runtimeS} s per timed job, targets rotated each repeat`);
    for (let r = 0; r < repeats; r++) {
      for (const [j, job] of JOBS.entries()) {
        for (let k = 0; k < targets.length; k++) {
          const ti = (k + r) % targets.length;
          const t = targets[ti];
          if (!t) continue;
          const figure = job.figure(await fio(job.name, job.args(t.dir, runtimeS), runtimeS));
          results[j]?.[ti]?.push(figure);
        }
      }
      process.stderr.write(`  repeat ${r + 1}/${repeats} done\n`);
    }

    console.log(`\nData path: median (min-max) over ${repeats} repeats; ratio = volume median / medium median (range of the per-repeat ratios)`);
    const heading = targets.map((t) => (t.mediumIndex === undefined ? t.label : `${t.label} | ratio`));
    console.log(`| job | unit | ${heading.join(' | ')} |`);
    console.log(`|---|---|${targets.map((t) => (t.mediumIndex === undefined ? '---|' : '---|---|')).join('')}`);
    for (const [j, job] of JOBS.entries()) {
      const row = results[j] ?? [];
      const cells = [job.title, job.unit];
      for (const [ti, t] of targets.entries()) {
        const vol = row[ti] ?? [];
        cells.push(fmtStats(stats(vol)));
        if (t.mediumIndex === undefined) continue;
        const med = row[t.mediumIndex] ?? [];
        const paired = vol.map((v, i) => v / (med[i] ?? NaN));
        cells.push(`${(median(vol) / median(med)).toFixed(2)}x (${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)})`);
      }
      console.log(`| ${cells.join(' | ')} |`);
    }
    console.log(`\n(${((Date.now() - started) / 1000).toFixed(0)} s, load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  } finally {
    for (const p of published) await unpublish(h, p);
    const left = [...await h.mounts(), ...await h.loops()];
    if (left.length > 0) {
      console.error(`left behind after unpublish/unstage/delete (removed by the harness now): ${left.join(', ')}`);
      process.exitCode = process.exitCode ?? 1;
    }
    await h.cleanup();
    for (const b of BACKENDS) await b.medium?.release().catch((err: unknown) => console.error(`releasing ${b.label}'s disk: ${(err as Error).message}`));
    await fs.rm(mediaDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  if (abort.signal.aborted) console.error('interrupted: volumes taken down and the work directory removed');
  else console.error(err);
  process.exitCode = process.exitCode ?? 1;
});
