// `lode driver` start-up: flags and environment, the errors an operator sees, the socket, and the per-RPC log line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DriverHarness, LODE_CLI, MiB, mountCap } from '../helpers/driver-harness.js';

function runDriver(args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; stderr: string } {
  const res = spawnSync(process.execPath, [LODE_CLI, 'driver', ...args], {
    env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 20_000,
  });
  return { code: res.status, stderr: res.stderr };
}

test('bad flags and missing pieces stop the driver with a message naming the problem', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-startup-'));
  try {
    const ep = `unix://${dir}/csi.sock`;
    const cases: Array<[string[], RegExp]> = [
      [[], /--endpoint is required/],
      [['--endpoint', ep], /--node-id is required/],
      [['--endpoint', ep, '--node-id', 'n1'], /at least one --pool/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}/nope`], /directory .*nope does not exist/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', 'p=relative/dir'], /must be an absolute path/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `Bad_Name=${dir}`], /a name is 1-63 lower-case/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},size=lots`], /size: "lots" is not a size/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},size=10GB`], /size: "10GB" is not a size: give a Kubernetes quantity: .*Ki, Mi, Gi.*k, M, G/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},colour=blue`], /unknown option "colour"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}`, '--pool', `p=${dir}`], /given twice/],
      [['--endpoint', 'tcp://127.0.0.1:1', '--node-id', 'n1', '--pool', `p=${dir}`], /must be unix:\/\/\/absolute/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}`, '--bogus'], /Unknown option '--bogus'/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}`, '--log-level', 'loud'], /--log-level "loud"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},reserve=100%`], /reserve: 100% must be more than 0% and less than 100%/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},reserve=lots`], /reserve: "lots" is not a size/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},size=1Gi,reserve=10%`], /reserve applies to pools without size=/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},inline-max-size=0`], /inline-max-size: must be positive/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=zfs`], /backend "zfs" is not supported \(supported: loop, dir, lvm\)/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm`], /backend=lvm needs vg=/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=-bad`], /vg "-bad" is not an LVM name/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},vg=data`], /vg, thin-pool, overprovision, thin-alert and snapshot-size apply to backend=lvm only/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,overprovision=2`], /apply to thin pools only/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,thin-pool=tp,overprovision=0.5`], /overprovision must be a number from 1 to 100, not "0.5"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,thin-pool=tp,thin-alert=101%`], /thin-alert must be a number from 1 to 100/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,size=1Gi`], /an lvm pool follows its volume group/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,snapshot-size=0%`], /snapshot-size: 0% must be more than 0% and at most 100%/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,snapshot-size=150%`], /snapshot-size: 150% must be more than 0% and at most 100%/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,snapshot-size=lots`], /snapshot-size: "lots" is not a size/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,thin-pool=tp,snapshot-size=20%`], /snapshot-size applies to thick lvm pools only/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},snapshot-size=20%`], /snapshot-size apply to backend=lvm only/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},backend=lvm,vg=data,direct-io=on`], /direct-io applies to backend=loop only/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir},direct-io=maybe`], /direct-io must be on or off, not "maybe"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}`, '--capacity-refresh', '0'], /--capacity-refresh "0"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool-config', `${dir}/none`], /--pool-config .*none has no file "n1"/],
      [['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${dir}`, '--pool-root', 'relative'], /--pool-root "relative" must be an absolute path/],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = runDriver(args);
      assert.notEqual(code, 0, `${args.join(' ')} must fail`);
      assert.match(stderr, message, `${args.join(' ')}: ${stderr}`);
    }
    assert.deepEqual(await fs.readdir(dir), [], 'a failed start writes nothing');
    const nested = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-overlap-'));
    await fs.mkdir(path.join(nested, 'inner'));
    const overlap = runDriver(['--endpoint', ep, '--node-id', 'n1', '--pool', `a=${nested}`, '--pool', `b=${nested}/inner`]);
    await fs.rm(nested, { recursive: true, force: true });
    assert.notEqual(overlap.code, 0);
    assert.match(overlap.stderr, /pools "b" and "a" overlap|pools "a" and "b" overlap/);
    // LVM reads its metadata without device-mapper, so a missing volume group is told on any host.
    const state = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-lvm-state-'));
    const noVg = runDriver(['--endpoint', ep, '--node-id', 'n1', '--pool', `p=${state},backend=lvm,vg=lodenosuchvg`]);
    await fs.rm(state, { recursive: true, force: true });
    assert.notEqual(noVg.code, 0);
    assert.match(noVg.stderr, /pool p: (volume group lodenosuchvg does not exist \(create it: vgcreate|LVM cannot be queried: (vgs could not start \(ENOENT\): )?vgs is not installed)/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('a socket another process serves is refused; a stale one is replaced; the socket is not world-writable', async () => {
  const h = await DriverHarness.start();
  try {
    const again = runDriver(['--endpoint', h.endpoint, '--node-id', 'n2', '--pool', `p=${h.poolDir('fast')}`]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /in use by another process/);
    const mode = (await fs.stat(h.socket)).mode & 0o777;
    assert.equal(mode & 0o002, 0, 'not world-writable');
    assert.equal(mode, 0o660);

    // Leave a stale socket behind (a killed driver), then start again on it.
    await h.kill();
    const stale = await fs.lstat(h.socket);
    assert.ok(stale.isSocket(), 'SIGKILL leaves the socket file');
    await h.startProcess();
    const info = await h.client.nodeGetInfo({});
    assert.equal(info.node_id, h.nodeId);
  } finally {
    await h.cleanup();
  }
});

test('every flag can come from the environment, as the DaemonSet sets them', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-env-'));
  await fs.mkdir(path.join(dir, 'a'));
  await fs.mkdir(path.join(dir, 'b'));
  for (const k of ['k1', 'k2', 'k3']) await fs.mkdir(path.join(dir, k));
  const sock = path.join(dir, 'csi.sock');
  const proc = spawn(process.execPath, [LODE_CLI, 'driver'], {
    env: {
      PATH: process.env.PATH,
      LODE_ENDPOINT: `unix://${sock}`, NODE_NAME: 'env-node', LODE_DRIVER_NAME: 'env.example.com',
      LODE_POOLS: `a=${dir}/a,size=64Mi; b=${dir}/b,size=128Mi`, LODE_TARGET_ROOTS: `${dir}/k1:${dir}/k2`,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const { CsiClient, grpcCode } = await import('../../src/csi/client.js');
  const { status } = await import('@grpc/grpc-js');
  const client = new CsiClient(`unix://${sock}`, 10_000);
  try {
    for (let i = 0; i < 100; i++) {
      try { await client.probe({}, { timeoutMs: 300 }); break; } catch { await new Promise((r) => setTimeout(r, 50)); }
    }
    const info = await client.getPluginInfo({});
    assert.equal(info.name, 'env.example.com');
    const node = await client.nodeGetInfo({});
    assert.equal(node.node_id, 'env-node');
    assert.deepEqual(node.accessible_topology?.segments, { 'topology.env.example.com/node': 'env-node' });
    assert.equal((await client.getCapacity({ parameters: { pool: 'a' } })).available_capacity, String(64 * MiB));
    assert.equal((await client.getCapacity({ parameters: { pool: 'b' } })).available_capacity, String(128 * MiB));
    // LODE_TARGET_ROOTS: a path under either root is accepted (the unknown volume is then NOT_FOUND); one under neither is not.
    const ghost = 'lv-' + '1'.repeat(40);
    const stageAt = (p: string) => client.nodeStageVolume({ volume_id: ghost, staging_target_path: p, volume_capability: mountCap() });
    for (const root of ['k1', 'k2']) {
      await assert.rejects(stageAt(`${dir}/${root}/stage`), (err: unknown) => grpcCode(err) === status.NOT_FOUND, `${root} is a target root`);
    }
    await assert.rejects(stageAt(`${dir}/k3/stage`), (err: unknown) => grpcCode(err) === status.INVALID_ARGUMENT, 'k3 is not a target root');
  } finally {
    client.close();
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('each RPC writes one JSON log line with method, volume, duration and status code', async () => {
  const h = await DriverHarness.start();
  try {
    const v = await h.client.createVolume({ name: 'logged', capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [mountCap()] });
    await assert.rejects(h.client.deleteVolume({ volume_id: '../etc' }));
    await h.client.deleteVolume({ volume_id: v.volume?.volume_id ?? '' });
    await h.stop();
    const lines = h.log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const rpcs = lines.filter((l) => l.msg === 'rpc');
    const create = rpcs.find((l) => l.method === 'CreateVolume');
    assert.equal(create?.volume, 'logged');
    assert.equal(create?.code, 'OK');
    assert.equal(typeof create?.durationMs, 'number');
    const bad = rpcs.find((l) => l.method === 'DeleteVolume' && l.code !== 'OK');
    assert.equal(bad?.code, 'INVALID_ARGUMENT');
    assert.match(String(bad?.error), /volume_id/);
    assert.equal(rpcs.filter((l) => l.method === 'DeleteVolume').length, 2, 'one line per call');
  } finally {
    await h.cleanup();
  }
});

test('a unix socket path that is a regular file is never replaced', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-sockfile-'));
  try {
    await fs.mkdir(path.join(dir, 'pool'));
    await fs.writeFile(path.join(dir, 'csi.sock'), 'not a socket');
    const res = runDriver(['--endpoint', `unix://${dir}/csi.sock`, '--node-id', 'n1', '--pool', `p=${dir}/pool`]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /is not a socket; refusing to replace it/);
    assert.equal(await fs.readFile(path.join(dir, 'csi.sock'), 'utf8'), 'not a socket');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
