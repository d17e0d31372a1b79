// Which of the VM's four backends (dir on XFS and ext4 project quotas, lvm thick and thin) csi-sanity runs on in one run: a seeded choice that rotates, as the crash points do, so CI stays in budget and covers all four.
import { test } from 'node:test';
import { crashSlice } from '../conformance/crash-slice.js';
import type { BackendFixture } from '../conformance/fixture.js';

export const VM_SANITY_BACKENDS = ['dir-xfs', 'dir-ext4', 'lvm-thick', 'lvm-thin'] as const;
export type VmSanityBackend = (typeof VM_SANITY_BACKENDS)[number];

/**
 * Whether this run's seed takes `name` (the host's VM harness asks, to share the files among VMs
 * by what they will cost: the guest sees the same seed, passed through).
 */
export function sanityBackendTaken(name: string, env: NodeJS.ProcessEnv = process.env, now = Date.now()): boolean {
  return crashSlice(VM_SANITY_BACKENDS, 1, env, now).points.includes(name);
}

interface Backend {
  fixture: BackendFixture;
  /** lvm volumes are ext4 (the default fsType) on a logical volume; a dir volume grows by a new limit. */
  growsMountedExt4: boolean;
}

// Loaded only for the backend a run takes: the other files of the four then cost the guest little
// more than node's start under emulation.
async function backend(name: VmSanityBackend): Promise<Backend> {
  switch (name) {
    case 'dir-xfs': return { fixture: (await import('./quota-fixtures.js')).dirXfsFixture, growsMountedExt4: false };
    case 'dir-ext4': return { fixture: (await import('./quota-fixtures.js')).dirExt4Fixture, growsMountedExt4: false };
    case 'lvm-thick': return { fixture: (await import('./lvm-fixtures.js')).lvmThickFixture, growsMountedExt4: true };
    case 'lvm-thin': return { fixture: (await import('./lvm-fixtures.js')).lvmThinFixture, growsMountedExt4: true };
  }
}

/**
 * csi-sanity's specs in two halves: those of the Controller Service and of snapshots (56 of 92),
 * and the rest (Node Service, ControllerExpandVolume, Identity). All of them in one run of an lvm
 * pool took 186-303 s in the guest, against the VM's per-file bound of 300 s (one VM) or 420 s
 * (two), so each half is a file of its own; split at the Controller Service alone, the other half
 * of a thick pool still took 258 s, since the snapshot specs are among the slowest on lvm.
 */
export type SanityHalf = 'controller-snapshots' | 'node';
const CONTROLLER_AND_SNAPSHOTS = 'Controller Service|Snapshot';

/** Registers one csi-sanity test on `name`; `label` says the run's seed. */
async function sanityRun(name: VmSanityBackend, part: SanityHalf | 'node-expansion', label: string): Promise<void> {
  const { fixture, growsMountedExt4 } = await backend(name);
  const { fixturePools, sanityTest } = await import('../sanity/sanity-runner.js');
  const controllerExpansion = part !== 'node-expansion';
  const only = part === 'controller-snapshots'
    ? { focus: CONTROLLER_AND_SNAPSHOTS, why: `the other half runs in csi-sanity-${name}-node.test.ts` }
    : part === 'node'
      ? { skip: CONTROLLER_AND_SNAPSHOTS, why: `the other half runs in csi-sanity-${name}-controller-snapshots.test.ts` }
      : { focus: 'NodeExpandVolume', why: `without --controller-expansion only the growth differs; every other spec runs in csi-sanity-${name}-*.test.ts` };
  const what = part === 'controller-snapshots' ? 'Controller Service and snapshot specs' : part === 'node' ? 'Node Service, ControllerExpandVolume and Identity specs' : 'NodeExpandVolume without controller expansion';
  sanityTest({
    name: `${name}, ${what}${label}`,
    growsMountedExt4,
    unavailable: () => fixture.unavailable(),
    pools: (t) => fixturePools(t, fixture, 'vm'),
    parameters: { pool: 'vm' },
    // ext4 on lvm, the pool's own filesystem on dir, and nothing is written, so a size just above ext4's minimum does.
    bytes: 32 * 2 ** 20,
    controllerExpansion,
    only,
  });
}

/**
 * Registers one half of csi-sanity on `name` with --controller-expansion (each pool claims
 * snapshots and clones, the thick one with snapshot-size=50%, so their specs run with every other
 * spec the pool's capabilities allow), if this run takes `name`: one of the four per run (all four
 * with LODE_CRASH_POINTS=all; LODE_CRASH_SEED=N replays a run's choice; the seed defaults to the
 * UTC day and the tests' names say it); else one skipped test that says which backend the run took.
 */
export async function sanityOnVmBackend(name: VmSanityBackend, half: SanityHalf): Promise<void> {
  const slice = crashSlice(VM_SANITY_BACKENDS, 1);
  if (!sanityBackendTaken(name)) {
    test(`csi-sanity: ${name}, ${half} half${slice.label}`, { skip: `this run takes ${slice.points.join(', ')} of ${VM_SANITY_BACKENDS.join(', ')}` }, () => undefined);
    return;
  }
  await sanityRun(name, half, slice.label);
}

/**
 * Registers csi-sanity's NodeExpandVolume specs against a driver without --controller-expansion,
 * where the node alone grows a volume, on the backends this run takes (the same seed, so the same
 * ones as sanityOnVmBackend): nothing else differs without that flag.
 */
export async function nodeExpansionOnVmBackends(): Promise<void> {
  const slice = crashSlice(VM_SANITY_BACKENDS, 1);
  for (const name of VM_SANITY_BACKENDS.filter((n) => slice.points.includes(n))) await sanityRun(name, 'node-expansion', slice.label);
}
