// Test support: the differences between a re-enacted and a real-sidecar run that the real binaries' versions in the test environment explain, each checked and taken out before the differential test compares the rest.
import assert from 'node:assert/strict';
import { parseQuantity } from '../../src/util/quantity.js';
import type { Outcome } from './run-outcome.js';

/** A capacity line's maximumVolumeSize: "-" is none, no limit. */
function limit(q: string): number {
  return q === '-' ? Infinity : parseQuantity(q);
}

/**
 * Differences that come from the version of a real binary in the test environment, not from the
 * re-enactment: each is written up in docs/bench.md ("Re-enacted against real: the differential
 * test") with the upstream commit that explains it. `expected` checks the difference is there and
 * no larger than that version explains (it throws otherwise), and gives the real outcome with it
 * taken out; everything else is then compared as for any scenario.
 */
export const VERSION_DIFFERENCES: Record<string, { why: string; expected: (real: Outcome, reenacted: Outcome) => Outcome }> = {
  '12-snapshot-restore/scenario.yaml': {
    why: 'snapshot-controller v8.2.0 does not requeue a VolumeSnapshot whose deletion waits for a restoring claim (kubernetes-csi/external-snapshotter 21c0111d, first in v8.6.0, the release the DaemonSet ships): db-snap is still there when the 10-minute wait ends, and its space still taken on its node',
    expected: (real, reenacted) => {
      const kept = real.snapshots.filter((x) => /^default\/db-snap of data-db-0 ready=true /.test(x));
      assert.equal(kept.length, 1, `the real run still has db-snap, ready (${real.snapshots.join('; ') || 'no snapshots'})`);
      assert.equal(reenacted.snapshots.some((x) => x.startsWith('default/db-snap ')), false, 'the re-enacted run deleted db-snap');
      const [, restoreSize, node] = /ready=true (\S+) on (\S+)/.exec(kept[0]!)!;
      // Its node's capacity per class is lower by at most the snapshot's restore size; the other nodes' are untouched.
      const capacities = real.capacities.map((line) => {
        const [n, cls, cap, , max] = line.split(' ');
        if (n !== node) return line;
        const twin = reenacted.capacities.find((x) => x.startsWith(`${n} ${cls} `));
        assert.ok(twin !== undefined, `a re-enacted capacity object for ${n} ${cls}`);
        const [, , reCap, , reMax] = twin.split(' ');
        const less = parseQuantity(reCap!) - parseQuantity(cap!);
        assert.ok(less > 0 && less <= parseQuantity(restoreSize!), `${line}: lower than the re-enacted ${twin} by the snapshot's space`);
        assert.ok(limit(max!) <= limit(reMax!), `${line}: maximumVolumeSize no larger than the re-enacted ${twin}`);
        return twin;
      });
      return { ...real, snapshots: real.snapshots.filter((x) => !kept.includes(x)), capacities };
    },
  },
};

