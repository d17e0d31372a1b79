// One generator per CSI call the driver serves: each builds a request with hostile fields and knows how to send it.
import type { CallOptions, CsiClient } from '../../src/csi/client.js';
import type { FuzzRandom } from './fuzz-random.js';
import type { Hostile } from './hostile-values.js';

/** A generated call, ready to send; `request` is kept for the failure report. */
export interface FuzzCall {
  rpc: string;
  request: unknown;
  /** True when one field carries a huge value (64 KiB-1 MiB strings, thousands of keys or entries). */
  big: boolean;
  send(c: CsiClient, o: CallOptions): Promise<unknown>;
}

type Make = (v: Hostile, rng: FuzzRandom, big: boolean) => FuzzCall;

/** The first field, of several, that gets the huge value: each call makes one at most. */
function bigField(rng: FuzzRandom, big: boolean, fields: readonly string[]): string | undefined {
  return big ? rng.pick(fields) : undefined;
}

const EPHEMERAL = 'csi.storage.k8s.io/ephemeral';

export const GENERATORS: ReadonlyArray<readonly [string, Make]> = [
  ['GetPluginInfo', (_v, _r, big) => ({ rpc: 'GetPluginInfo', request: {}, big, send: (c, o) => c.getPluginInfo({}, o) })],
  ['GetPluginCapabilities', (_v, _r, big) => ({ rpc: 'GetPluginCapabilities', request: {}, big, send: (c, o) => c.getPluginCapabilities({}, o) })],
  ['Probe', (_v, _r, big) => ({ rpc: 'Probe', request: {}, big, send: (c, o) => c.probe({}, o) })],
  ['ControllerGetCapabilities', (_v, _r, big) => ({ rpc: 'ControllerGetCapabilities', request: {}, big, send: (c, o) => c.controllerGetCapabilities({}, o) })],
  ['NodeGetCapabilities', (_v, _r, big) => ({ rpc: 'NodeGetCapabilities', request: {}, big, send: (c, o) => c.nodeGetCapabilities({}, o) })],
  ['NodeGetInfo', (_v, _r, big) => ({ rpc: 'NodeGetInfo', request: {}, big, send: (c, o) => c.nodeGetInfo({}, o) })],
  ['CreateVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['name', 'parameters', 'secrets', 'mutable_parameters', 'volume_capabilities']);
    const req = {
      // Mostly a handful of names, so repeats test idempotency and the pool does not fill with strays.
      name: b === 'name' ? v.str(true) : rng.chance(0.6) ? `fz-${rng.int(6)}` : v.str(),
      capacity_range: v.range(),
      volume_capabilities: v.caps(b === 'volume_capabilities'),
      parameters: v.map(b === 'parameters'),
      secrets: rng.chance(0.2) || b === 'secrets' ? v.map(b === 'secrets') : {},
      mutable_parameters: rng.chance(0.1) || b === 'mutable_parameters' ? v.map(b === 'mutable_parameters') : {},
      ...(rng.chance(0.1) ? { volume_content_source: rng.chance(0.5) ? { snapshot: { snapshot_id: v.snapshotId() } } : { volume: { volume_id: v.id() } } } : {}),
      ...(rng.chance(0.2) ? { accessibility_requirements: { requisite: [v.topology()], preferred: rng.chance(0.5) ? [v.topology()] : [] } } : {}),
    };
    return { rpc: 'CreateVolume', request: req, big, send: (c, o) => c.createVolume(req, o) };
  }],
  ['DeleteVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'secrets']);
    const req = { volume_id: v.id(b === 'volume_id'), secrets: b === 'secrets' || rng.chance(0.2) ? v.map(b === 'secrets') : {} };
    return { rpc: 'DeleteVolume', request: req, big, send: (c, o) => c.deleteVolume(req, o) };
  }],
  ['ValidateVolumeCapabilities', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'volume_context', 'parameters', 'volume_capabilities', 'secrets']);
    const req = {
      volume_id: v.id(b === 'volume_id'), volume_context: v.map(b === 'volume_context'), volume_capabilities: v.caps(b === 'volume_capabilities'),
      parameters: v.map(b === 'parameters'), secrets: b === 'secrets' ? v.map(true) : {}, mutable_parameters: rng.chance(0.1) ? v.map() : {},
    };
    return { rpc: 'ValidateVolumeCapabilities', request: req, big, send: (c, o) => c.validateVolumeCapabilities(req, o) };
  }],
  ['ListVolumes', (v, rng, big) => {
    const req = { max_entries: rng.pick([0, 1, 2, -1, -2147483648, 2147483647, rng.between(0, 50)]), starting_token: v.token(big) };
    return { rpc: 'ListVolumes', request: req, big, send: (c, o) => c.listVolumes(req, o) };
  }],
  ['GetCapacity', (v, rng, big) => {
    const b = bigField(rng, big, ['parameters', 'volume_capabilities', 'accessible_topology']);
    const req = {
      volume_capabilities: v.caps(b === 'volume_capabilities'), parameters: v.map(b === 'parameters'),
      ...(b === 'accessible_topology' ? { accessible_topology: { segments: v.map(true) } } : rng.chance(0.5) ? { accessible_topology: v.topology() } : {}),
    };
    return { rpc: 'GetCapacity', request: req, big, send: (c, o) => c.getCapacity(req, o) };
  }],
  ['ControllerExpandVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'secrets', 'volume_capability']);
    const cap = v.cap(b === 'volume_capability');
    const req = {
      volume_id: v.id(b === 'volume_id'), capacity_range: v.range(), secrets: b === 'secrets' ? v.map(true) : {},
      ...(cap ? { volume_capability: cap } : {}),
    };
    return { rpc: 'ControllerExpandVolume', request: req, big, send: (c, o) => c.controllerExpandVolume(req, o) };
  }],
  ['CreateSnapshot', (v, rng, big) => {
    const b = bigField(rng, big, ['name', 'source_volume_id', 'parameters', 'secrets']);
    const req = {
      // A few names, so repeats meet existing snapshots (idempotency and ALREADY_EXISTS).
      name: b === 'name' ? v.str(true) : rng.chance(0.7) ? `fz-snap-${rng.int(4)}` : v.str(),
      source_volume_id: v.id(b === 'source_volume_id'),
      parameters: rng.chance(0.3) || b === 'parameters' ? v.map(b === 'parameters') : {},
      secrets: b === 'secrets' ? v.map(true) : {},
    };
    return { rpc: 'CreateSnapshot', request: req, big, send: (c, o) => c.createSnapshot(req, o) };
  }],
  ['DeleteSnapshot', (v, rng, big) => {
    const req = { snapshot_id: v.snapshotId(big), secrets: rng.chance(0.2) ? v.map() : {} };
    return { rpc: 'DeleteSnapshot', request: req, big, send: (c, o) => c.deleteSnapshot(req, o) };
  }],
  ['ListSnapshots', (v, rng, big) => {
    const b = bigField(rng, big, ['starting_token', 'snapshot_id', 'source_volume_id']);
    const req = {
      max_entries: rng.pick([0, 1, 2, -1, -2147483648, 2147483647]), starting_token: v.token(b === 'starting_token'),
      snapshot_id: rng.chance(0.3) || b === 'snapshot_id' ? v.snapshotId(b === 'snapshot_id') : '',
      source_volume_id: rng.chance(0.3) || b === 'source_volume_id' ? v.id(b === 'source_volume_id') : '',
    };
    return { rpc: 'ListSnapshots', request: req, big, send: (c, o) => c.listSnapshots(req, o) };
  }],
  ['NodeStageVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'staging_target_path', 'publish_context', 'volume_context', 'secrets', 'volume_capability']);
    const cap = v.cap(b === 'volume_capability');
    const req = {
      volume_id: v.id(b === 'volume_id'), staging_target_path: v.path(b === 'staging_target_path'),
      publish_context: b === 'publish_context' ? v.map(true) : rng.chance(0.2) ? v.map() : {},
      volume_context: v.map(b === 'volume_context'), secrets: b === 'secrets' ? v.map(true) : {},
      ...(cap ? { volume_capability: cap } : {}),
    };
    return { rpc: 'NodeStageVolume', request: req, big, send: (c, o) => c.nodeStageVolume(req, o) };
  }],
  ['NodeUnstageVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'staging_target_path']);
    const req = { volume_id: v.id(b === 'volume_id'), staging_target_path: v.path(b === 'staging_target_path') };
    return { rpc: 'NodeUnstageVolume', request: req, big, send: (c, o) => c.nodeUnstageVolume(req, o) };
  }],
  ['NodePublishVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'staging_target_path', 'target_path', 'volume_context', 'secrets', 'publish_context', 'volume_capability']);
    const cap = v.cap(b === 'volume_capability');
    const context = v.map(b === 'volume_context');
    // Inline ephemeral requests are half of the interesting ones: the pod author writes their attributes.
    if (rng.chance(0.35)) context[EPHEMERAL] = rng.chance(0.9) ? 'true' : v.str();
    const req = {
      volume_id: v.id(b === 'volume_id'), staging_target_path: rng.chance(0.15) ? '' : v.path(b === 'staging_target_path'),
      target_path: v.path(b === 'target_path'), readonly: rng.chance(0.3), volume_context: context,
      publish_context: b === 'publish_context' ? v.map(true) : {}, secrets: b === 'secrets' ? v.map(true) : rng.chance(0.1) ? v.map() : {},
      ...(cap ? { volume_capability: cap } : {}),
    };
    return { rpc: 'NodePublishVolume', request: req, big, send: (c, o) => c.nodePublishVolume(req, o) };
  }],
  ['NodeUnpublishVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'target_path']);
    const req = { volume_id: v.id(b === 'volume_id'), target_path: v.path(b === 'target_path') };
    return { rpc: 'NodeUnpublishVolume', request: req, big, send: (c, o) => c.nodeUnpublishVolume(req, o) };
  }],
  ['NodeGetVolumeStats', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'volume_path', 'staging_target_path']);
    const req = { volume_id: v.id(b === 'volume_id'), volume_path: v.path(b === 'volume_path'), staging_target_path: rng.chance(0.3) || b === 'staging_target_path' ? v.path(b === 'staging_target_path') : '' };
    return { rpc: 'NodeGetVolumeStats', request: req, big, send: (c, o) => c.nodeGetVolumeStats(req, o) };
  }],
  ['NodeExpandVolume', (v, rng, big) => {
    const b = bigField(rng, big, ['volume_id', 'volume_path', 'staging_target_path', 'secrets', 'volume_capability']);
    const cap = v.cap(b === 'volume_capability');
    const req = {
      volume_id: v.id(b === 'volume_id'), volume_path: v.path(b === 'volume_path'), capacity_range: v.range(),
      staging_target_path: rng.chance(0.3) || b === 'staging_target_path' ? v.path(b === 'staging_target_path') : '',
      secrets: b === 'secrets' ? v.map(true) : {}, ...(cap ? { volume_capability: cap } : {}),
    };
    return { rpc: 'NodeExpandVolume', request: req, big, send: (c, o) => c.nodeExpandVolume(req, o) };
  }],
];

/** Every RPC of proto/csi.proto has a generator; the suite checks this list against the service definitions. */
export const GENERATED_RPCS = GENERATORS.map(([name]) => name);

/** A request as a short, printable description: long strings cut, crowded maps and lists counted. */
export function summarize(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > 48 ? `${JSON.stringify(value.slice(0, 40)).slice(1, -1)}…(${value.length} chars)` : value;
  if (Array.isArray(value)) return value.length > 6 ? [...value.slice(0, 3).map((x) => summarize(x, depth + 1)), `…(${value.length} items)`] : value.map((x) => summarize(x, depth + 1));
  if (typeof value === 'object' && value !== null && depth < 6) {
    const entries = Object.entries(value);
    const shown = entries.slice(0, 8).map(([k, x]) => [summarize(k, depth + 1) as string, summarize(x, depth + 1)]);
    if (entries.length > 8) shown.push(['…', `${entries.length} keys`]);
    return Object.fromEntries(shown);
  }
  return value;
}
