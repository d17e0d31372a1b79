// Scenarios 07, 08 and 09 with real drivers: static local PVs, StatefulSet scaling, a driver killed and restarted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

describe('07 static local PVs', { skip: needsRoot }, () => {
  it('smallest fitting PV on the node wins; node affinity decides where the pod goes', async () => {
    const r = await runBuiltIn('07-static-local-pvs/scenario.yaml');
    const pv = (claim: string): string | undefined => r.claims.find((c) => c.name === `default/${claim}`)?.volume;
    assert.equal(pv('app-a-data'), 'pv-n1-50');
    const released = r.volumes.find((v) => v.name === 'pv-n2-40');
    assert.equal(released?.phase, 'Released', 'app-b-data was bound to the 40Mi PV; deleted, it leaves it Released');
    assert.equal(released?.claim, 'default/app-b-data');
    assert.equal(r.pools.find((p) => p.node === 'node-2')?.allocatedBytes, 120 * 2 ** 20, 'Retain: the volume stays on the node');
    assert.equal(podNode(r, 'app-b'), undefined);
    assert.equal(pv('app-c-data'), 'pv-n1-100');
    assert.equal(podNode(r, 'app-c'), 'node-1', 'the only PV big enough is on node-1');
    for (const p of ['app-a', 'app-c']) assert.equal(podPhase(r, p), 'Running');
    assert.equal(r.volumes.find((v) => v.name === 'pv-n2-80')?.phase, 'Available');
    assert.equal(r.metrics.volumesProvisioned, 0, 'no-provisioner class: nothing is provisioned');
  });
});

describe('08 StatefulSet scale down and up', { skip: needsRoot }, () => {
  it('keeps the claims, and recreated pods return to their volumes and data', async () => {
    const r = await runBuiltIn('08-statefulset-scale/scenario.yaml');
    const up = markOf(r, 'scaled-up');
    const down = markOf(r, 'scaled-down');
    const again = markOf(r, 'scaled-up-again');
    assert.deepEqual(down.pods.map((p) => p.name), ['default/web-0']);
    assert.deepEqual(down.claims.map((c) => `${c.name}:${c.phase}`), ['default/data-web-0:Bound', 'default/data-web-1:Bound', 'default/data-web-2:Bound']);
    for (const pod of ['web-0', 'web-1', 'web-2']) {
      const first = up.pods.find((p) => p.name === `default/${pod}`);
      const second = again.pods.find((p) => p.name === `default/${pod}`);
      assert.equal(second?.phase, 'Running');
      assert.equal(second?.node, first?.node, `${pod} back on its node`);
    }
    for (const pod of ['web-1', 'web-2']) {
      const started = eventsOf(r, 'Started', pod);
      assert.equal(started.length, 2);
      assert.match(started[1]!.message, new RegExp(`data of default/${pod} found`));
    }
    const deletes = eventsOf(r, 'SuccessfulDelete').map((e) => e.message);
    assert.deepEqual(deletes, ['delete Pod web-2 in StatefulSet web successful', 'delete Pod web-1 in StatefulSet web successful']);
  });
});

describe('09 driver killed and restarted', { skip: needsRoot }, () => {
  it('loses no volume or data; the provisioner stops with its driver and provisions once it is back', async () => {
    const r = await runBuiltIn('09-driver-restart/scenario.yaml');
    assert.equal(eventsOf(r, 'VolumeDataLost').length, 0);
    const verified = eventsOf(r, 'VolumeDataVerified');
    assert.equal(verified.length, 1);
    assert.match(verified[0]!.message, /2 mounted volume\(s\) read back intact/);
    // As the real csi-provisioner exits when its driver's connection goes and waits for the socket once restarted: no CreateVolume meets the dead driver.
    assert.equal(r.metrics.provisioningFailuresByCode.Unavailable ?? 0, 0, 'no CreateVolume sent to the killed driver');
    assert.equal(eventsOf(r, 'ProvisioningFailed').length, 0);
    assert.equal(eventsOf(r, 'ProvisioningSucceeded', 'app-2-data').length, 1, 'app-2-data provisioned once the driver is back');
    // A restarted provisioner lists its informers' resources again and looks up its pod again; node-2's never restarted.
    const count = (client: string, verb: string, resource: string): number | undefined => r.apiRequests.find((x) => x.client === client && x.verb === verb && x.resource === resource)?.count;
    assert.deepEqual([count('csi-provisioner@node-1', 'list', 'persistentvolumeclaims'), count('csi-provisioner@node-1', 'get', 'pods')], [2, 2]);
    assert.deepEqual([count('csi-provisioner@node-2', 'list', 'persistentvolumeclaims'), count('csi-provisioner@node-2', 'get', 'pods')], [1, 1]);
    assert.equal(podPhase(r, 'app-2'), 'Running');
    assert.equal(podPhase(r, 'cache-1'), 'Running');
    assert.equal(r.pods.find((p) => p.name === 'default/app-1'), undefined, 'app-1 torn down through the restarted driver');
    const down = markOf(r, 'driver-down');
    assert.equal(down.pods.find((p) => p.name === 'default/app-2')?.phase, 'Pending');
    assert.equal(down.claims.find((c) => c.name === 'default/app-2-data')?.phase, 'Pending', 'nothing provisioned while the driver is down');
    assert.equal(r.claims.find((c) => c.name === 'default/app-1-data')?.phase, 'Bound', 'the claim outlives its pod');
  });
});
