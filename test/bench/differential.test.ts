// Issue 21 item 3: a built-in scenario run with the re-enacted sidecars and with the real kubernetes-csi binaries must end the same (pods and phases, nodes, claims, PVs and their nodes, capacity objects and figures, snapshots, Events by reason). A seeded slice per run; LODE_DIFFERENTIAL=all runs every listed scenario.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needsRoot, runBuiltIn } from './run-helpers.js';
import { skipWithoutSidecarTools } from '../helpers/csi-tools.js';
import { crashSlice } from '../conformance/crash-slice.js';
import { differences, outcome, type Outcome } from './run-outcome.js';

/**
 * The built-in scenarios both ways. Not listed: 10-central-mode (the real provisioner runs per
 * node here); 12-snapshot-restore, whose snapshot deletion waits for the 15-minute resync with the
 * snapshot-controller v8.2.0 of the test environment (a version difference, docs/bench.md "Re-enacted
 * against real: the differential test"); 09-driver-restart, where the real csi-provisioner exits when
 * it loses its driver and so records no ProvisioningFailed while the re-enacted one keeps retrying
 * through Unavailable (same page, not yet changed in the re-enactment); and 13-node-loss, not yet
 * run both ways.
 */
const SCENARIOS = ['demo/scenario.yaml', '01-capacity-tracking/scenario-on.yaml', '02-immediate-vs-wffc/scenario-wffc.yaml', '03-stale-capacity/scenario.yaml', '04-two-claims/scenario.yaml', '05-generic-ephemeral/scenario.yaml', '06-inline-ephemeral-full/scenario.yaml', '07-static-local-pvs/scenario.yaml', '08-statefulset-scale/scenario.yaml', '11-quota-directories/scenario.yaml', '14-orphaned-volume/scenario.yaml'];

/** Node names abstracted: where several nodes fit equally, which one a pod gets depends on which real provisioner updated its capacity first (wall time). */
function anonymous(o: Outcome, nodes: string[]): Outcome {
  const re = nodes.length === 0 ? undefined : new RegExp(`\\b(${nodes.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\b`, 'g');
  const strip = (xs: string[]): string[] => xs.map((x) => (re === undefined ? x : x.replace(re, 'NODE'))).sort();
  return { pods: strip(o.pods), nodes: o.nodes, claims: strip(o.claims), volumes: strip(o.volumes), capacities: strip(o.capacities), snapshots: strip(o.snapshots), eventReasons: o.eventReasons };
}

// One scenario per run, rotating by the UTC day: a real run is paced, so it costs its waits in wall time.
const slice = crashSlice(SCENARIOS, 1, { LODE_CRASH_SEED: process.env.LODE_DIFFERENTIAL_SEED, LODE_CRASH_POINTS: process.env.LODE_DIFFERENTIAL });
const label = slice.label.replaceAll('LODE_CRASH_SEED', 'LODE_DIFFERENTIAL_SEED').replaceAll('LODE_CRASH_POINTS', 'LODE_DIFFERENTIAL');

describe(`re-enacted and real sidecars end the same${label}`, { skip: needsRoot }, () => {
  for (const file of slice.points) {
    it(file, async (t) => {
      if (await skipWithoutSidecarTools(t)) return;
      const reenacted = await runBuiltIn(file);
      const real = await runBuiltIn(file, undefined, { sidecars: 'real' });
      assert.equal(real.sidecars, 'real');
      assert.deepEqual(real.sidecarExits, [], 'no real sidecar exited unexpectedly');
      const a = outcome(reenacted);
      const b = outcome(real);
      // Where placement among equally fitting nodes differs, say so; the outcome must still be the same.
      for (const d of differences(a, b)) t.diagnostic(`exact: ${d}`);
      const nodes = a.nodes;
      assert.deepEqual(b.nodes, nodes, 'the same nodes');
      assert.deepEqual(differences(anonymous(a, nodes), anonymous(b, nodes)), []);
      // Each claim's PV on its pod's node, in both (a Lost claim's PV is gone: 14 force-deletes it).
      for (const o of [reenacted, real]) {
        for (const c of o.claims) if (c.volume !== '' && c.phase !== 'Lost') assert.equal(o.volumes.find((v) => v.name === c.volume)?.node, c.node, `${c.name}: PV on the claim's node`);
      }
    });
  }
});
