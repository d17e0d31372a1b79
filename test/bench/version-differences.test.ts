// The named version differences of the differential test: 12's is taken out when it is what snapshot-controller v8.2.0 explains, and refused when it is missing or larger.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION_DIFFERENCES } from './version-differences.js';
import { differences, type Outcome } from './run-outcome.js';

const empty: Outcome = { pods: [], nodes: ['node-1', 'node-2'], claims: [], volumes: [], capacities: [], snapshots: [], eventReasons: [] };
// Lines as today's differential run of 12-snapshot-restore printed them (node-2's are made up: they were the same both ways).
const reenacted: Outcome = { ...empty, capacities: ['node-1 lode-local 80Mi max 80Mi', 'node-1 lode-local-xfs 80Mi max 0', 'node-2 lode-local 112Mi max 112Mi'], snapshots: [] };
const real: Outcome = {
  ...empty,
  capacities: ['node-1 lode-local 77712Ki max 75Mi', 'node-1 lode-local-xfs 77712Ki max 0', 'node-2 lode-local 112Mi max 112Mi'],
  snapshots: ['default/db-snap of data-db-0 ready=true 32Mi on node-1'],
};
const twelve = VERSION_DIFFERENCES['12-snapshot-restore/scenario.yaml']!;

describe('version differences of the differential test', () => {
  it('12: the kept db-snap and its node\'s lower capacity are taken out, nothing else', () => {
    assert.deepEqual(differences(reenacted, twelve.expected(real, reenacted)), []);
    // Another node's capacity differing is not the version's doing: still a difference.
    const other = { ...real, capacities: real.capacities.map((c) => c.replace('node-2 lode-local 112Mi', 'node-2 lode-local 100Mi')) };
    assert.equal(differences(reenacted, twelve.expected(other, reenacted)).length, 1);
  });

  it('12: refused when db-snap is gone from the real run too, or its node lost more than the snapshot\'s size', () => {
    assert.throws(() => twelve.expected({ ...real, snapshots: [] }, reenacted), /still has db-snap/);
    const lost = { ...real, capacities: real.capacities.map((c) => c.replace('77712Ki max 75Mi', '40Mi max 40Mi')) };
    assert.throws(() => twelve.expected(lost, reenacted), /by the snapshot's space/);
  });
});
