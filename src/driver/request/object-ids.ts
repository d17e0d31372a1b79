// The ids Lode gives volumes and snapshots: derived from the CSI name (so a retried create finds its object) and carrying the node that holds it.
import { createHash } from 'node:crypto';

/** Hex digits of the name's digest: 128 bits, so two names never meet. */
const DIGEST_HEX = 32;
/**
 * A node id longer than this is carried as a digest instead: ids stay within CSI's 128 bytes
 * and an LVM name (`lode-` + id) within LVM's 127 characters.
 */
const MAX_NODE_PART = 64;
const HASHED_NODE = /^h[0-9a-f]{16}$/;

export type ObjectKind = 'volume' | 'snapshot';
const PREFIX: Record<ObjectKind, string> = { volume: 'lv-', snapshot: 'sn-' };

function digest(text: string, hex: number): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, hex);
}

/** The node's part of an id: the node id itself when it fits, else "h" + a digest of it. */
function nodePart(nodeId: string): string {
  return nodeId.length <= MAX_NODE_PART && !nodeId.includes('..') ? nodeId : 'h' + digest(nodeId, 16);
}

/** The id of the volume or snapshot CreateVolume or CreateSnapshot makes under `name` on this node. */
export function objectIdForName(kind: ObjectKind, name: string, nodeId: string): string {
  return `${PREFIX[kind]}${digest(kind + '\0' + name, DIGEST_HEX)}.${nodePart(nodeId)}`;
}

/**
 * The id volumes had before ids carried their node ("lv-" + 40 hex digits). A retried
 * CreateVolume of a volume made by an older driver is found under it.
 */
export function legacyVolumeIdForName(name: string): string {
  return 'lv-' + createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 40);
}

/** Where an id says its object lives. */
export type Holder =
  | { kind: 'this-node' }
  | { kind: 'node'; nodeId: string }
  /** Lode's id of a node whose name was too long to carry. */
  | { kind: 'hashed-node' }
  /** Not an id of this form (an older volume id, kubelet's inline ids, a stranger's): no node to name. */
  | { kind: 'unknown' };

/** Reads the node out of an id of `kind`, compared with this node. */
export function holderOf(kind: ObjectKind, id: string, thisNodeId: string): Holder {
  const prefix = PREFIX[kind];
  const head = prefix.length + DIGEST_HEX;
  if (!id.startsWith(prefix) || id.length < head + 2 || id[head] !== '.' || !/^[0-9a-f]+$/.test(id.slice(prefix.length, head))) {
    return { kind: 'unknown' };
  }
  const node = id.slice(head + 1);
  if (node === nodePart(thisNodeId)) return { kind: 'this-node' };
  return HASHED_NODE.test(node) ? { kind: 'hashed-node' } : { kind: 'node', nodeId: node };
}

/** For messages: the node an id names, in words. */
export function describeHolder(h: Holder): string {
  switch (h.kind) {
    case 'this-node': return 'this node';
    case 'node': return `node ${h.nodeId}`;
    case 'hashed-node': return 'another node (its name is too long to carry in the id; see the PersistentVolume\'s node affinity)';
    case 'unknown': return 'no node this driver can name';
  }
}
