// Reading and checking CSI VolumeCapability: access type, filesystem, mount flags, access mode.
import type { VolumeCapability__Output } from '../../csi/types.js';
import { isSupportedFsType, SUPPORTED_FS_TYPES, type FsType } from '../../sys/filesystem.js';
import type { AccessType } from '../../pool/volume-record.js';
import { invalidArgument } from '../rpc/errors.js';

/** Access modes a node-local volume can honour: everything on one node. */
export const SUPPORTED_ACCESS_MODES = [
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
] as const;

export interface Capability {
  accessType: AccessType;
  /** '' when the caller left the choice to the driver, or for block. */
  fsType: FsType | '';
  mountFlags: string[];
  mode: string;
}

/** Mount flags are single options; a comma would smuggle in several. */
const MOUNT_FLAG = /^[A-Za-z0-9_][A-Za-z0-9_.=:/+-]{0,127}$/;
/** Options that would change what is mounted or how, not tune the filesystem: Lode decides those. */
const RESERVED_FLAGS = /^(bind|rbind|remount|move|make-\w+|loop(=.*)?|x-.*|X-.*)$/;

/** How much of a capability the caller must state. */
export interface CapabilityReading {
  /**
   * An access mode left unset (the enum's zero, UNKNOWN) or an access type left unset asks for
   * nothing, so it rules nothing out. Only GetCapacity reads capabilities so: csi-provisioner
   * v2.0.0 to v4.0.1 sent every GetCapacity one mount capability with access mode UNKNOWN, meaning
   * "capacity does not depend on capabilities" (upstream a10147309 sends none since v5.0.0).
   */
  unsetMeansAny?: boolean;
}

/** Returns a description of why `cap` is not supported, or the parsed capability. */
export function parseCapability(cap: VolumeCapability__Output | null | undefined, field: string, reading: CapabilityReading = {}): Capability | string {
  if (!cap) return `${field} is required`;
  const stated = cap.access_mode?.mode ?? 'UNKNOWN';
  if (cap.access_mode === null && !reading.unsetMeansAny) return `${field}.access_mode is required`;
  const mode = stated === 'UNKNOWN' && reading.unsetMeansAny ? SUPPORTED_ACCESS_MODES[0] : stated;
  if (!(SUPPORTED_ACCESS_MODES as readonly string[]).includes(mode)) {
    return `${field}: access mode ${mode} is not supported: a node-local volume is usable on one node only (supported: ${SUPPORTED_ACCESS_MODES.join(', ')})`;
  }
  // Protobuf keeps the last member of a oneof it decodes, so a request carrying both is told apart only here.
  if (cap.block && cap.mount) return `${field}: access_type must be either block or mount, not both`;
  if (cap.access_type === 'block' || (cap.block && !cap.mount)) {
    return { accessType: 'block', fsType: '', mountFlags: [], mode };
  }
  if (cap.access_type === 'mount' || cap.mount) {
    const m = cap.mount;
    const fs = m?.fs_type ?? '';
    if (fs !== '' && !isSupportedFsType(fs)) return `${field}: fs_type "${fs}" is not supported (supported: ${SUPPORTED_FS_TYPES.join(', ')})`;
    if (m?.volume_mount_group) return `${field}: volume_mount_group is not supported`;
    const flags = m?.mount_flags ?? [];
    for (const f of flags) {
      if (!MOUNT_FLAG.test(f)) return `${field}: mount flag "${JSON.stringify(f).slice(1, -1)}" is not a single mount option`;
      if (RESERVED_FLAGS.test(f)) return `${field}: mount flag "${f}" is not allowed: it changes what is mounted, which is the driver's to decide`;
    }
    return { accessType: 'mount', fsType: fs as FsType | '', mountFlags: [...flags], mode };
  }
  if (reading.unsetMeansAny) return { accessType: 'mount', fsType: '', mountFlags: [], mode };
  return `${field}: access_type (block or mount) is required`;
}

/** Like parseCapability, but a problem is an INVALID_ARGUMENT error. */
export function requireCapability(cap: VolumeCapability__Output | null | undefined, field: string): Capability {
  const parsed = parseCapability(cap, field);
  if (typeof parsed === 'string') throw invalidArgument(parsed);
  return parsed;
}

export function isReadOnlyMode(mode: string): boolean {
  return mode === 'SINGLE_NODE_READER_ONLY';
}
