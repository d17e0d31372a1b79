// Near-valid calls: a real request for a live volume with one or two fields made hostile, so the hostile value reaches deep code.
import type * as csi from '../../src/csi/types.js';
import type { LiveView } from './fuzz-lifecycle.js';
import type { FuzzRandom } from './fuzz-random.js';
import type { FuzzCall } from './hostile-requests.js';
import { HOSTILE_FLAGS, type Hostile } from './hostile-values.js';

type AccessMode = NonNullable<NonNullable<csi.VolumeCapability['access_mode']>['mode']>;

/** A capability for the same volume that differs in one way: flags, mode, fs type, both access types, none. */
function twistCap(v: Hostile, rng: FuzzRandom, base: csi.VolumeCapability): csi.VolumeCapability {
  const mode: AccessMode = (base.access_mode?.mode ?? 'SINGLE_NODE_WRITER') as AccessMode;
  const mount = base.mount ?? { fs_type: 'ext4', mount_flags: [] };
  return rng.weighted<() => csi.VolumeCapability>([
    // Flags the filesystem rejects or that fight the read-only rule reach mount(8) only with everything else right.
    [6, () => ({ ...base, ...(base.block ? {} : { mount: { ...mount, mount_flags: Array.from({ length: rng.between(1, 3) }, () => rng.pick(HOSTILE_FLAGS)) } }) })],
    [2, () => ({ ...base, access_mode: { mode: rng.pick<AccessMode>(['SINGLE_NODE_READER_ONLY', 'MULTI_NODE_READER_ONLY', 'MULTI_NODE_MULTI_WRITER', 'SINGLE_NODE_MULTI_WRITER', 'UNKNOWN']) } })],
    [2, () => ({ block: {}, mount: { ...mount, mount_flags: rng.chance(0.5) ? ['rw'] : [] }, access_mode: { mode } })],
    [1, () => ({ ...base, ...(base.block ? { block: undefined, mount: { fs_type: v.fsType(), mount_flags: [] } } : { mount: { ...mount, fs_type: v.fsType() } }) })],
    [1, () => (base.block ? { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode } } : { block: {}, access_mode: { mode } })],
    [1, () => ({ access_mode: { mode } })],
    [1, () => v.cap() ?? base],
  ])();
}

/** Read-only asked for one way, read-write for another: the mount must still be read-only. */
function readOnlyConflict(rng: FuzzRandom, cap: csi.VolumeCapability): { cap: csi.VolumeCapability; readonly: boolean } {
  const flags = [rng.pick(['rw', 'rw', 'remount', 'ro,rw', 'defaults'])];
  const withFlags: csi.VolumeCapability = cap.block ? cap : { ...cap, mount: { ...(cap.mount ?? {}), mount_flags: flags } };
  return rng.chance(0.5)
    ? { cap: withFlags, readonly: true }
    : { cap: { ...withFlags, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } }, readonly: rng.chance(0.5) };
}

export function nearValid(v: Hostile, rng: FuzzRandom, live: readonly LiveView[]): FuzzCall | undefined {
  if (live.length === 0) return undefined;
  const l = rng.pick(live);
  const other = rng.pick(live);
  const path = () => rng.weighted<() => string>([
    [1, () => rng.pick([other.staging, other.target, l.staging + '/x', l.target])],
    [1, () => rng.pick(v.links())],
    [2, () => v.path(rng.chance(0.03))],
  ])();
  const kind = rng.weighted<string>([
    [5, 'stage'], [6, 'publish'], [3, 'inline'], [2, 'unpublish'], [2, 'unstage'], [2, 'stats'], [2, 'nodeExpand'],
    [1, 'controllerExpand'], [1, 'validate'], [1, 'create'], [1, 'delete'],
  ]);
  switch (kind) {
    case 'stage': {
      const field = rng.pick(['path', 'cap', 'context', 'readonly-mode']);
      const cap = field === 'cap' ? twistCap(v, rng, l.cap) : field === 'readonly-mode' ? readOnlyConflict(rng, l.cap).cap : l.cap;
      const req = {
        volume_id: l.id, staging_target_path: field === 'path' ? path() : l.staging, volume_capability: cap,
        volume_context: field === 'context' ? v.map(rng.chance(0.1)) : {}, secrets: rng.chance(0.1) ? v.map() : {},
      };
      return { rpc: 'NodeStageVolume', request: req, big: false, send: (c, o) => c.nodeStageVolume(req, o) };
    }
    case 'publish': {
      const field = rng.pick(['target', 'target', 'target', 'staging', 'cap', 'readonly', 'context']);
      const ro = field === 'readonly' ? readOnlyConflict(rng, l.cap) : { cap: field === 'cap' ? twistCap(v, rng, l.cap) : l.cap, readonly: rng.chance(0.2) };
      const req = {
        volume_id: l.id, staging_target_path: field === 'staging' ? path() : l.staging,
        target_path: field === 'target' ? path() : rng.chance(0.5) ? l.target : v.path(), volume_capability: ro.cap, readonly: ro.readonly,
        volume_context: field === 'context' ? v.map(rng.chance(0.1)) : {},
      };
      return { rpc: 'NodePublishVolume', request: req, big: false, send: (c, o) => c.nodePublishVolume(req, o) };
    }
    case 'inline': {
      // A pod author controls all of this: the attributes, and (through the pod spec) the flags and read-only.
      const flags = rng.chance(0.5) ? [rng.pick(HOSTILE_FLAGS)] : [];
      const ro = rng.chance(0.3);
      const req = {
        volume_id: `csi-fz${rng.int(8)}`, target_path: rng.chance(0.6) ? v.path() : other.target + '-inline',
        volume_capability: { mount: { fs_type: rng.pick(['', 'ext4', 'xfs', v.fsType()]), mount_flags: ro && rng.chance(0.5) ? ['rw'] : flags }, access_mode: { mode: rng.pick<AccessMode>(['SINGLE_NODE_WRITER', 'SINGLE_NODE_READER_ONLY']) } },
        readonly: ro,
        volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: rng.pick(['16Mi', '32Mi', '1Mi', '0', '-1', '1Ei', '100Ti', v.str()]), ...(rng.chance(0.3) ? v.map(rng.chance(0.05)) : {}) },
      };
      return { rpc: 'NodePublishVolume', request: req, big: false, send: (c, o) => c.nodePublishVolume(req, o) };
    }
    case 'unpublish': {
      const req = { volume_id: rng.chance(0.8) ? l.id : other.id, target_path: path() };
      return { rpc: 'NodeUnpublishVolume', request: req, big: false, send: (c, o) => c.nodeUnpublishVolume(req, o) };
    }
    case 'unstage': {
      const req = { volume_id: rng.chance(0.8) ? l.id : other.id, staging_target_path: path() };
      return { rpc: 'NodeUnstageVolume', request: req, big: false, send: (c, o) => c.nodeUnstageVolume(req, o) };
    }
    case 'stats': {
      const req = { volume_id: l.id, volume_path: path(), staging_target_path: rng.chance(0.3) ? path() : '' };
      return { rpc: 'NodeGetVolumeStats', request: req, big: false, send: (c, o) => c.nodeGetVolumeStats(req, o) };
    }
    case 'nodeExpand': {
      const req = { volume_id: l.id, volume_path: rng.chance(0.5) ? l.target : path(), capacity_range: v.range(), volume_capability: rng.chance(0.5) ? l.cap : twistCap(v, rng, l.cap) };
      return { rpc: 'NodeExpandVolume', request: req, big: false, send: (c, o) => c.nodeExpandVolume(req, o) };
    }
    case 'controllerExpand': {
      const req = { volume_id: l.id, capacity_range: v.range() };
      return { rpc: 'ControllerExpandVolume', request: req, big: false, send: (c, o) => c.controllerExpandVolume(req, o) };
    }
    case 'validate': {
      const req = { volume_id: l.id, volume_capabilities: [twistCap(v, rng, l.cap)], parameters: rng.chance(0.5) ? v.map() : {} };
      return { rpc: 'ValidateVolumeCapabilities', request: req, big: false, send: (c, o) => c.validateVolumeCapabilities(req, o) };
    }
    case 'create': {
      // The name of a live volume with another size, capability or parameters.
      const req = { name: l.name, capacity_range: rng.chance(0.5) ? v.range() : { required_bytes: l.bytes }, volume_capabilities: [twistCap(v, rng, l.cap)], parameters: rng.chance(0.5) ? v.map() : {} };
      return { rpc: 'CreateVolume', request: req, big: false, send: (c, o) => c.createVolume(req, o) };
    }
    default: {
      const req = { volume_id: l.id };
      return { rpc: 'DeleteVolume', request: req, big: false, send: (c, o) => c.deleteVolume(req, o) };
    }
  }
}
