// The calls sidecars and kubelet repeat on a timer (Probe, plugin info, capabilities, node info, capacity) stay out of the info log; real work and failures stay in it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, expectCode, MiB, status } from './support.js';

const ROUTINE = ['Probe', 'GetPluginInfo', 'GetPluginCapabilities', 'ControllerGetCapabilities', 'NodeGetCapabilities', 'NodeGetInfo', 'GetCapacity'];

let quiet: DriverHarness;
let verbose: DriverHarness;

before(async () => {
  quiet = await DriverHarness.start();
  verbose = await DriverHarness.start({ extraArgs: ['--log-level', 'debug'] });
});

after(async () => {
  await quiet?.cleanup();
  await verbose?.cleanup();
});

interface RpcLine { level: string; method: string; code: string }

function rpcLines(h: DriverHarness): RpcLine[] {
  return h.log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as RpcLine & { msg: string })
    .filter((l) => l.msg === 'rpc');
}

/** Waits for the log line of a call the test made last, so every earlier line is in too. */
async function lineFor(h: DriverHarness, method: string, code: string): Promise<RpcLine> {
  for (;;) {
    const found = rpcLines(h).find((l) => l.method === method && l.code === code);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function routineCalls(h: DriverHarness): Promise<void> {
  await h.client.probe();
  await h.client.getPluginInfo();
  await h.client.getPluginCapabilities();
  await h.client.controllerGetCapabilities();
  await h.client.nodeGetCapabilities();
  await h.client.nodeGetInfo();
  await h.client.getCapacity();
}

test('routine calls are logged at debug, not info; work at info and failures at warn', async () => {
  await routineCalls(quiet);
  await createVolume(quiet, 'log-a', 16 * MiB);
  await expectCode(quiet.client.deleteVolume({ volume_id: '../x' }), status.INVALID_ARGUMENT);
  // A routine call that fails is not routine: it is in the log at warn.
  await expectCode(quiet.client.getCapacity({ parameters: { onNodeLoss: 'bogus' } }), status.INVALID_ARGUMENT);
  assert.equal((await lineFor(quiet, 'CreateVolume', 'OK')).level, 'info');
  assert.equal((await lineFor(quiet, 'DeleteVolume', 'INVALID_ARGUMENT')).level, 'warn');
  assert.equal((await lineFor(quiet, 'GetCapacity', 'INVALID_ARGUMENT')).level, 'warn');
  // The harness itself probed the driver until it was ready; none of that is in the log either.
  const routine = rpcLines(quiet).filter((l) => ROUTINE.includes(l.method) && l.code === 'OK');
  assert.deepEqual(routine, [], 'no routine call in the info log');
});

test('at debug, routine calls are there', async () => {
  await routineCalls(verbose);
  await createVolume(verbose, 'log-b', 16 * MiB);
  await lineFor(verbose, 'CreateVolume', 'OK');
  const seen = new Set(rpcLines(verbose).filter((l) => l.level === 'debug').map((l) => l.method));
  for (const m of ROUTINE) assert.ok(seen.has(m), `${m} logged at debug`);
});
