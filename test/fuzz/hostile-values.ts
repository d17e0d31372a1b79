// Hostile field values: odd strings and bytes, huge and crowded maps, mount flags, capabilities, capacity ranges, paths.
import * as path from 'node:path';
import type * as csi from '../../src/csi/types.js';
import type { FuzzRandom } from './fuzz-random.js';

export const KiB = 1024;
export const MiB = 1024 * KiB;

type AccessMode = NonNullable<NonNullable<csi.VolumeCapability['access_mode']>['mode']>;

const MODES: AccessMode[] = [
  'SINGLE_NODE_WRITER', 'SINGLE_NODE_READER_ONLY', 'SINGLE_NODE_SINGLE_WRITER', 'SINGLE_NODE_MULTI_WRITER',
  'MULTI_NODE_READER_ONLY', 'MULTI_NODE_SINGLE_WRITER', 'MULTI_NODE_MULTI_WRITER', 'UNKNOWN',
];

/** Short strings that have broken parsers, shells, loggers and path code somewhere. */
const ODD_STRINGS = [
  '', ' ', '\0', 'a\0b', '\n', 'x\r\ny', '\t', '\u007f', '\u0085', '\u001b[2J', '\u202eevil', '\u200b', '\ufeff',
  '\ud800', 'x\udfffy', 'é', '日本語', '🙂', '$(reboot)', '`id`', ';rm -rf /', 'a|b', '&&', '%s%s%n', '{{.}}', '${HOME}',
  '"}', '\\', '\\"', '../../etc/passwd', '/', '.', '..', '-1', '0', '9'.repeat(30), '1e9', '0x10', ' 1', 'NaN',
  'Infinity', 'null', 'undefined', 'true', '[]', '{}', 'ext4', 'xfs', 'EXT4', 'btrfs', 'tmpfs', 'proc', 'ext4 ',
  'ext4,rw', 'auto', 'none', 'fast', 'lv-0', 'csi-0', 'pvc-1', '16Mi', '1Ei', '-1Gi', '1.5Gi', '99999999999Ti',
];

/** Keys the driver gives meaning to, so hostile values reach real parsing code. */
const MEANINGFUL_KEYS = [
  'pool', 'fsType', 'size', 'csi.storage.k8s.io/fstype', 'csi.storage.k8s.io/ephemeral', 'csi.storage.k8s.io/pvc/name',
  'csi.storage.k8s.io/pvc/namespace', 'csi.storage.k8s.io/pv/name', 'csi.storage.k8s.io/pod.name',
  'csi.storage.k8s.io/serviceAccount.tokens', 'csi.storage.k8s.io/pod.uid',
];

/**
 * Mount flags: some the filesystem rejects (mount exits 32), some that would change what is
 * mounted, read-write against read-only, smuggled lists. Never `errors=panic` or a real disk as
 * an external journal: a hostile test must not be able to take this machine down.
 */
export const HOSTILE_FLAGS = [
  'rw', 'ro', 'bind', 'BIND', 'rbind', 'remount', 'move', 'make-shared', 'loop', 'x-mount.mkdir', 'X-foo', 'uid=0',
  'gid=0', 'mode=4777', 'dax', 'dax=always', 'nouuid', 'journal_path=/dev/null', 'logdev=/dev/null', 'ro,rw', 'rw,bind',
  'uid=0,gid=0', 'noexec', 'nosuid', 'nodev', 'sync', 'discard', 'noatime', 'errors=remount-ro', 'data=journal',
  'commit=0', 'barrier=0', 'usrquota', 'grpid', 'inode64', 'norecovery', 'noload', 'defaults', '', ' ', '-o', '--bind',
  'rw\0', 'ro\n', 'context="system_u:object_r:tmp_t:s0"', 'a'.repeat(200), 'size=1', 'nr_inodes=1', 'offset=0',
];

export const INT64_EDGES = [
  '0', '1', '-1', '-16777216', '16777216', '33554432', '67108864', '314572800', '1073741824', '4294967296',
  '9007199254740991', '9007199254740993', '9223372036854775807', '-9223372036854775808', '1099511627776',
];

/** What the generator may refer to: paths and ids that exist, so hostile fields meet live state. */
export interface FuzzWorld {
  kubelet: string;
  hostilePaths: readonly string[];
  /** The planted links themselves (dangling, looping, leading out). */
  links: readonly string[];
  plainParents: readonly string[];
  /** Ids of volumes the lifecycle made (some staged or published). */
  liveIds(): string[];
  /** Stage and publish paths the lifecycle uses now. */
  livePaths(): string[];
}

export class Hostile {
  private serial = 0;

  constructor(private readonly rng: FuzzRandom, private readonly world: FuzzWorld) {}

  /** A long string of `n` characters, cheap to make; sometimes with odd characters sprinkled in. */
  long(n: number): string {
    const unit = this.rng.pick(['a', 'é', '/', '\0', '9', 'ab/', '../', '%', '\u202e', 'x'.repeat(63) + '/']);
    let s = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
    if (this.rng.chance(0.3)) s = s.slice(0, n >> 1) + this.rng.pick(ODD_STRINGS) + s.slice(n >> 1);
    return s;
  }

  /** Sizes that straddle the spec's limits (128 bytes, 4 KiB, PATH_MAX) and go far past them. */
  bigLength(): number {
    return this.rng.pick([127, 128, 129, 255, 256, 1024, 4095, 4096, 4097, 16 * KiB, 64 * KiB, 100 * KiB, 256 * KiB, MiB - 1, MiB]);
  }

  str(big = false): string {
    if (big) return this.long(this.bigLength());
    return this.rng.weighted<() => string>([
      [6, () => this.rng.pick(ODD_STRINGS)],
      [2, () => this.rng.bytes(this.rng.between(1, 24)).toString('latin1')],
      [2, () => this.rng.bytes(this.rng.between(1, 24)).toString('utf8')],
      [2, () => this.rng.pick(ODD_STRINGS) + this.rng.pick(ODD_STRINGS)],
      [1, () => this.long(this.rng.between(120, 300))],
    ])();
  }

  /** A volume id: a live one, a plausible unknown one, or a hostile string. */
  id(big = false): string {
    if (big) return this.str(true);
    const live = this.world.liveIds();
    return this.rng.weighted<() => string>([
      [live.length > 0 ? 5 : 0, () => this.rng.pick(live)],
      [2, () => `lv-${(this.serial++).toString(16).padStart(8, '0')}`],
      [1, () => `csi-fz${this.serial++}`],
      [3, () => this.str()],
    ])();
  }

  /** A snapshot id: a plausible one (of this node or another), one made from a volume id, or a hostile string. */
  snapshotId(big = false): string {
    if (big) return this.str(true);
    return this.rng.weighted<() => string>([
      [2, () => `sn-${(this.serial++).toString(16).padStart(32, '0')}.${this.rng.pick(['node-a', 'node-far', 'h0123456789abcdef'])}`],
      [2, () => this.id().replace(/^lv-/, 'sn-')],
      [3, () => this.str()],
    ])();
  }

  /** A staging or target path. */
  path(big = false): string {
    const w = this.world;
    if (big) {
      return this.rng.weighted<() => string>([
        [2, () => path.join(w.kubelet, 'fz', 'plain', this.long(this.bigLength()))],
        [1, () => w.kubelet + '/' + 'd/'.repeat(this.bigLength() >> 1)],
        [1, () => this.long(this.bigLength())],
      ])();
    }
    const live = w.livePaths();
    return this.rng.weighted<() => string>([
      [6, () => this.rng.pick(w.hostilePaths)],
      [live.length > 0 ? 3 : 0, () => this.rng.pick(live)],
      [live.length > 0 ? 1 : 0, () => path.join(this.rng.pick(live), this.rng.pick(['x', '..', 'a/b', '']))],
      [3, () => path.join(this.rng.pick(w.plainParents), `p${this.serial++}`, this.rng.chance(0.5) ? 'mount' : '')],
      [1, () => `${w.kubelet}/pods/${this.str()}`],
      [1, () => this.rng.pick(['pods/x/mount', '', '/', '/etc/lode-fz', '/proc/self', '/dev/null', '/tmp', `${w.kubelet}/../x`,
        `${w.kubelet}//pods/x`, `${w.kubelet}/pods/./x`, `${w.kubelet}/pods/x/`, `${w.kubelet}/pods/x/..`, `${w.kubelet}/pods/\0`])],
      [1, () => this.str()],
    ])();
  }

  links(): readonly string[] { return this.world.links; }

  mode(): AccessMode {
    return this.rng.chance(0.6) ? this.rng.pick(MODES.slice(0, 4)) : this.rng.pick(MODES);
  }

  flags(): string[] {
    if (this.rng.chance(0.4)) return [];
    const n = this.rng.chance(0.05) ? this.rng.between(100, 3000) : this.rng.between(1, 4);
    return Array.from({ length: n }, () => (this.rng.chance(0.85) ? this.rng.pick(HOSTILE_FLAGS) : this.str()));
  }

  fsType(big = false): string {
    if (big) return this.str(true);
    return this.rng.weighted<() => string>([[4, () => this.rng.pick(['ext4', 'xfs', ''])], [2, () => this.str()]])();
  }

  /** A capability: block, mount, both, neither, odd modes and flags. */
  cap(big = false): csi.VolumeCapability | null {
    const access_mode = this.rng.chance(0.08) ? null : { mode: this.mode() };
    const mount = { fs_type: this.fsType(big && this.rng.chance(0.5)), mount_flags: big ? [this.long(this.bigLength())] : this.flags(), volume_mount_group: this.rng.chance(0.05) ? this.str() : '' };
    return this.rng.weighted<() => csi.VolumeCapability | null>([
      [5, () => ({ mount, access_mode })],
      [3, () => ({ block: {}, access_mode })],
      [2, () => ({ block: {}, mount, access_mode })],
      [1, () => ({ access_mode })],
      [1, () => null],
    ])();
  }

  caps(big = false): csi.VolumeCapability[] {
    const n = this.rng.chance(0.03) ? this.rng.between(50, 2000) : this.rng.between(0, 3);
    return Array.from({ length: n }, (_, i) => this.cap(big && i === 0)).filter((c): c is csi.VolumeCapability => c !== null);
  }

  int64(): string {
    return this.rng.chance(0.7) ? this.rng.pick(INT64_EDGES) : String(this.rng.between(-5, 600) * MiB + this.rng.between(-1, 1));
  }

  range(): csi.CapacityRange | null {
    if (this.rng.chance(0.15)) return null;
    const required = this.int64();
    const limit = this.rng.weighted<() => string>([
      [3, () => '0'],
      [2, () => this.int64()],
      [1, () => String(BigInt(required) - 1n)], // limit < required
    ])();
    return { required_bytes: required, limit_bytes: limit };
  }

  /** A string map: meaningful keys with odd values, odd keys, thousands of keys, or one huge value or key. */
  map(big = false, meaningful = MEANINGFUL_KEYS): Record<string, string> {
    const out: Record<string, string> = {};
    if (big) {
      const kind = this.rng.int(3);
      if (kind === 0) out[this.rng.pick(meaningful)] = this.long(this.bigLength());
      else if (kind === 1) out[this.long(this.bigLength())] = 'v';
      else for (let i = 0, n = this.rng.between(1000, 20000); i < n; i++) out[`k${i}-${this.rng.pick(['', 'é', '\n'])}`] = i % 7 === 0 ? this.str() : 'v';
      return out;
    }
    for (let i = 0, n = this.rng.between(0, 4); i < n; i++) {
      const key = this.rng.chance(0.6) ? this.rng.pick(meaningful) : this.str();
      out[key] = this.rng.chance(0.5) ? this.rng.pick(['true', 'false', 'fast', 'nope', 'ext4', 'xfs', '16Mi', '32Mi', '1Ei', '0']) : this.str();
    }
    return out;
  }

  topology(): csi.Topology {
    return { segments: this.rng.chance(0.5) ? { 'topology.lode.csi.dev/node': this.rng.pick(['node-fz', 'node-b', this.str()]) } : this.map() };
  }

  token(big = false): string {
    return big ? this.long(this.bigLength()) : this.rng.pick(['', '0', '1', '2', '-1', '99999999999999999999', 'abc', '1e3', this.str()]);
  }
}
