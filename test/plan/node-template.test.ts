// A node group's template: a Node and a NodePools document; every mistake refused with the file and what to fix.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseNodeTemplate } from '../../src/plan/node-template.js';
import { emptyCapacityBytes } from '../../src/plan/paper-pool.js';
import { template } from './plan-fixtures.js';

const GiB = 2 ** 30;
const NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: t}\n';
const POOLS = (body: string): string => `---\napiVersion: plan.lode.csi.dev/v1alpha1\nkind: NodePools\n${body}`;

describe('parseNodeTemplate', () => {
  it('reads the Node and its pools in order, with what each offers when empty', () => {
    const t = parseNodeTemplate(template('t', [
      { spec: 'fast=/var/lib/lode/fast,size=10Gi' },
      { spec: 'bulk=/var/lib/lode/bulk,reserve=5Gi', disk: '100Gi' },
      { spec: 'dirs=/var/lib/lode/dirs,backend=dir,reserve=10%', disk: '50Gi', filesystem: 'btrfs' },
      { spec: 'thick=/var/lib/lode/lvm,backend=lvm,vg=vg0,reserve=1Gi', disk: '10Gi' },
    ], { cpu: '4', pods: '110' }), 't.yaml');
    assert.equal(t.node.metadata?.name, 't');
    assert.equal(t.node.status?.allocatable?.cpu, '4');
    assert.deepEqual(t.pools.map((p) => [p.shape.config.name, p.shape.config.backend, emptyCapacityBytes(p)]), [
      ['fast', 'loop', 10 * GiB], ['bulk', 'loop', 95 * GiB], ['dirs', 'dir', 45 * GiB], ['thick', 'lvm', 9 * GiB],
    ]);
    assert.equal(t.pools[2]!.shape.capabilities.fixedFsType, 'btrfs', 'a dir pool\'s volumes have its filesystem');
    assert.equal(t.pools[3]!.shape.allocationUnit(), 4 * 2 ** 20, 'lvm counts in 4 MiB extents');
  });

  const refused: [string, string, RegExp][] = [
    ['no Node', POOLS('pools: [{spec: "a=/x,size=1Gi"}]\n'), /t\.yaml: a template holds exactly one Node, found 0$/],
    ['another kind', `${NODE}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n`, /document 2: a template holds one Node and one NodePools \(plan\.lode\.csi\.dev\/v1alpha1\), not kind Pod/],
    ['a wrong apiVersion', `${NODE}---\napiVersion: lode/v1\nkind: NodePools\npools: [{spec: "a=/x,size=1Gi"}]\n`, /NodePools: apiVersion must be plan\.lode\.csi\.dev\/v1alpha1, not "lode\/v1"/],
    ['an entry without spec', `${NODE}${POOLS('pools: [{disk: 1Gi}]\n')}`, /pools\[0\]: spec: required/],
    ['an unknown field', `${NODE}${POOLS('pools: [{spec: "a=/x,size=1Gi", size: 1Gi}]\n')}`, /pools\[0\]: unknown field "size" \(known: spec, disk, filesystem\)/],
    ['a pool listed twice', `${NODE}${POOLS('pools: [{spec: "a=/x,size=1Gi"}, {spec: "a=/y,size=1Gi"}]\n')}`, /pools\[1\]: pool "a" is listed twice/],
    ['a filesystem on a loop pool', `${NODE}${POOLS('pools: [{spec: "a=/x,size=1Gi", filesystem: xfs}]\n')}`, /filesystem applies to backend=dir pools/],
    ['a dir pool on a filesystem without quotas', `${NODE}${POOLS('pools: [{spec: "a=/x,backend=dir,size=1Gi", filesystem: vfat}]\n')}`, /filesystem "vfat" cannot hold a dir pool \(xfs, ext4, btrfs\)/],
    ['an lvm pool without disk', `${NODE}${POOLS('pools: [{spec: "a=/x,backend=lvm,vg=vg0"}]\n')}`, /give disk: \(the size of its volume group\)/],
    ['a disk that is no size', `${NODE}${POOLS('pools: [{spec: "a=/x,reserve=1%", disk: lots}]\n')}`, /pools\[0\]: /],
    ['a Node the API server refuses', `apiVersion: v1\nkind: Node\nmetadata: {name: t}\nspec: {taints: [{key: k, effect: Sometimes}]}\n${POOLS('pools: [{spec: "a=/x,size=1Gi"}]\n')}`, /Node "t" is invalid/],
  ];
  for (const [what, text, message] of refused) {
    it(`refuses ${what}`, () => assert.throws(() => parseNodeTemplate(text, 't.yaml'), message));
  }
});
