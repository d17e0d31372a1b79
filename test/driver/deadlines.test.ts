// Deadlines and cancellation: a call whose tool hangs ends when its client's deadline passes or its client cancels, the tool and its children are killed, the volume's lock is free, and a retry converges.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { csiDefinition } from '../../src/csi/proto.js';
import { boundsFor } from '../../src/driver/rpc/bounds.js';
import { unary } from '../../src/driver/rpc/adapter.js';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, expectCode, fsCap, MiB, mountAt, status } from './support.js';

let h: DriverHarness;
/** Holds the fake tool; the driver finds it first on its PATH. */
let fakeDir: string;
/** While this file exists, the fake mkfs.ext4 hangs instead of formatting. */
let slowFlag: string;

/**
 * A named fake at a process boundary we do not own: mkfs.ext4 that, while the flag file exists,
 * records its pid, starts a child that sleeps and waits for it (so killing only the shell would
 * leave the child running), and otherwise runs the real mkfs.ext4.
 */
function fakeMkfs(realMkfs: string): string {
  return [
    '#!/bin/sh',
    `if [ -e '${slowFlag}' ]; then`,
    `  echo $$ > '${fakeDir}/mkfs.pid'`,
    '  sleep 3600 &',
    `  echo $! > '${fakeDir}/sleep.pid'`,
    '  wait',
    '  exit 1',
    'fi',
    `exec '${realMkfs}' "$@"`,
    '',
  ].join('\n');
}

before(async () => {
  fakeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-fake-tools-'));
  slowFlag = path.join(fakeDir, 'slow');
  const realMkfs = execFileSync('sh', ['-c', 'command -v mkfs.ext4'], { encoding: 'utf8' }).trim();
  await fs.writeFile(path.join(fakeDir, 'mkfs.ext4'), fakeMkfs(realMkfs), { mode: 0o755 });
  h = await DriverHarness.start({}, { PATH: `${fakeDir}:${process.env.PATH ?? ''}` });
});

after(async () => {
  try {
    for (const f of ['mkfs.pid', 'sleep.pid']) {
      const pid = await readPid(f);
      if (pid !== undefined && running(pid)) process.kill(pid, 'SIGKILL');
    }
  } finally {
    await h?.cleanup();
    await fs.rm(fakeDir, { recursive: true, force: true });
  }
});

async function readPid(file: string): Promise<number | undefined> {
  const text = await fs.readFile(path.join(fakeDir, file), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : Number(text.trim());
}

/** True while `pid` runs (a zombie, killed but not yet reaped by init, does not count). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits for a condition the driver brings about on its own; fails the test if it never comes. */
async function eventually(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const giveUp = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > giveUp) assert.fail(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The driver's log line for the one finished call of `method` that ended with `code`. */
function logged(method: string, code: string): boolean {
  return h.log.split('\n').some((line) => line.includes('"msg":"rpc"') && line.includes(`"method":"${method}"`) && line.includes(`"code":"${code}"`));
}

/** The fake tool and its child, both started and both gone. */
async function toolsStartedAndGone(): Promise<void> {
  const shell = await readPid('mkfs.pid');
  const child = await readPid('sleep.pid');
  assert.ok(shell !== undefined && child !== undefined, 'the slow mkfs ran');
  assert.equal(running(shell), false, 'the tool was killed');
  assert.equal(running(child), false, 'the tool\'s child was killed with it');
  await fs.rm(path.join(fakeDir, 'mkfs.pid'));
  await fs.rm(path.join(fakeDir, 'sleep.pid'));
}

/** A retry with mkfs working again stages the volume, and unstage and delete leave nothing behind. */
async function retryConverges(id: string, tag: string): Promise<void> {
  await fs.rm(slowFlag, { force: true });
  const staging = h.stagingPath(tag);
  await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap() });
  assert.equal((await mountAt(staging)).fsType, 'ext4');
  await fs.writeFile(path.join(staging, 'data'), 'formatted once');
  await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: id });
  assert.deepEqual(await h.loops(), [], 'no loop device is left');
  assert.deepEqual(await h.mounts(), [], 'no mount is left');
}

test('a stage whose mkfs hangs ends at the client\'s deadline; mkfs is killed and a retry converges', async () => {
  const { id } = await createVolume(h, 'deadline-a', 32 * MiB);
  await fs.writeFile(slowFlag, '');
  const staging = h.stagingPath('deadline-a');
  // Long enough for the driver to reach mkfs; the fake then hangs for an hour.
  await expectCode(h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap() }, { timeoutMs: 3000 }),
    status.DEADLINE_EXCEEDED, 'NodeStageVolume with a hanging mkfs');
  // The client gave up on its own clock; the driver's answer says its side is over too.
  await eventually('the driver ending the call', () => logged('NodeStageVolume', 'DEADLINE_EXCEEDED'));
  await toolsStartedAndGone();
  // The stage that gave up undid what it did, although its own call was over by then.
  assert.deepEqual(await h.loops(), [], 'the stage killed at its deadline detached the device it attached');
  await retryConverges(id, 'deadline-a');
});

test('a stage whose client cancels it ends at once; mkfs is killed and a retry converges', async () => {
  const { id } = await createVolume(h, 'deadline-b', 32 * MiB);
  await fs.writeFile(slowFlag, '');
  const staging = h.stagingPath('deadline-b');
  let answer: grpc.ServiceError | null | undefined;
  const call = h.client.node.NodeStageVolume(
    { volume_id: id, staging_target_path: staging, volume_capability: fsCap() }, new grpc.Metadata(),
    { deadline: Date.now() + 600_000 }, (err) => { answer = err; });
  await eventually('the slow mkfs starting', async () => (await readPid('sleep.pid')) !== undefined);
  call.cancel();
  await eventually('the client seeing the cancellation', () => answer !== undefined);
  assert.equal(answer?.code, status.CANCELLED);
  await eventually('the driver ending the call', () => logged('NodeStageVolume', 'CANCELLED'));
  await toolsStartedAndGone();
  await retryConverges(id, 'deadline-b');
});

test('a call whose client set no deadline still ends at the driver\'s maximum, its tool killed', async () => {
  // The adapter itself, on a real gRPC server, with a maximum short enough to wait for; its
  // handler runs a tool that would sleep for an hour.
  const identity = csiDefinition()['csi.v1.Identity'];
  assert.ok(identity !== undefined);
  const probe = identity.Probe;
  assert.ok(probe);
  let sleeper: Promise<unknown> | undefined;
  const handler = async () => {
    sleeper = run('sleep', ['3600']);
    await sleeper;
    return { ready: { value: true } };
  };
  const server = new grpc.Server();
  server.addService({ Probe: probe }, { Probe: unary('Probe', handler, boundsFor(probe.requestType), undefined, 300) as grpc.UntypedHandleCall });
  const socket = path.join(fakeDir, 'max.sock');
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  const client = new grpc.Client(`unix:${socket}`, grpc.credentials.createInsecure());
  try {
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      client.makeUnaryRequest(probe.path, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (e) => resolve(e));
    });
    assert.equal(err?.code, status.DEADLINE_EXCEEDED, err?.details);
    assert.match(err?.details ?? '', /driver's limit/);
    // The tool was killed, not left to sleep: its promise settled with the kill.
    await assert.rejects(sleeper ?? Promise.resolve(), /killed by SIGKILL/);
  } finally {
    client.close();
    server.forceShutdown();
  }
});
