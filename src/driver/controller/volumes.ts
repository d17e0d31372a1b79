// The CSI Controller calls on this node's volumes: create (empty or from a source), delete, validate, list and capacity.
import type * as csi from '../../csi/types.js';
import { holdersOf } from '../mount/holders.js';
import { newVolumeBytes, volumeFsType } from '../request/pool-fit.js';
import { capacityFigures } from '../request/capacity-figures.js';
import { newVolumeRecord, type VolumeRecord } from '../../pool/volume-record.js';
import { parseCapability, requireCapability, type Capability } from '../request/capability.js';
import type { DriverContext } from '../context/context.js';
import { checkAgainstSource, resolveSource, type ResolvedSource } from './content-source.js';
import { freezePathFor } from '../mount/consistent-copy.js';
import { describeHolder, holderOf, legacyVolumeIdForName, objectIdForName } from '../request/object-ids.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound, resourceExhausted } from '../rpc/errors.js';
import { poolMissing, readParameters, PARAM_POOL } from '../request/parameters.js';
import { readRange, type Range } from '../request/sizing.js';
import { pageOf } from '../rpc/paging.js';
import { requireName, requireVolumeId } from '../request/validate.js';

function toCsiVolume(ctx: DriverContext, r: VolumeRecord): csi.Volume {
  const source = r.contentSource;
  return {
    volume_id: r.id,
    capacity_bytes: String(r.capacityBytes),
    volume_context: { [PARAM_POOL]: r.pool },
    accessible_topology: [ctx.topology()],
    ...(source === undefined ? {} : {
      content_source: 'snapshot' in source ? { snapshot: { snapshot_id: source.snapshot } } : { volume: { volume_id: source.volume } },
    }),
  };
}

function sameSource(a: VolumeRecord['contentSource'], b: VolumeRecord['contentSource']): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function readCapabilities(caps: csi.VolumeCapability__Output[]): Capability[] {
  if (caps.length === 0) throw invalidArgument('volume_capabilities is required');
  const parsed = caps.map((c, i) => requireCapability(c, `volume_capabilities[${i}]`));
  const types = new Set(parsed.map((c) => c.accessType));
  if (types.size > 1) throw invalidArgument('volume_capabilities mixes block and mount access');
  const fsTypes = new Set(parsed.map((c) => c.fsType).filter((f) => f !== ''));
  if (fsTypes.size > 1) throw invalidArgument(`volume_capabilities asks for several filesystems (${[...fsTypes].join(', ')})`);
  return parsed;
}

function sameParameters(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** Why an existing volume cannot answer this CreateVolume, or undefined when it can. */
function incompatibility(r: VolumeRecord, range: Range, pool: string, caps: Capability[], params: Record<string, string>, source: ResolvedSource | undefined): string | undefined {
  if (r.ephemeral) return 'the name belongs to an inline ephemeral volume';
  if (!sameSource(r.contentSource, source?.named)) return 'it was made from another content source';
  if (r.pool !== pool) return `it lives in pool ${r.pool}, not ${pool}`;
  if (r.capacityBytes < range.required) return `it has ${r.capacityBytes} bytes, ${range.required} required`;
  if (range.limit > 0 && r.capacityBytes > range.limit) return `it has ${r.capacityBytes} bytes, over the limit of ${range.limit}`;
  const access = caps[0]?.accessType;
  if (access !== undefined && access !== r.accessType) return `it was created for ${r.accessType} access`;
  const fs = caps.find((c) => c.fsType !== '')?.fsType;
  if (fs !== undefined && r.accessType === 'mount' && fs !== r.fsType) return `it was created for ${r.fsType}`;
  if (!sameParameters(r.parameters, params)) return 'its parameters differ';
  return undefined;
}

export async function createVolume(ctx: DriverContext, req: csi.CreateVolumeRequest__Output): Promise<csi.CreateVolumeResponse> {
  const { catalog } = ctx;
  const name = requireName(req.name);
  const caps = readCapabilities(req.volume_capabilities);
  const params = readParameters(req.parameters, catalog);
  const range = readRange(req.capacity_range);
  const missing = poolMissing(params, catalog);
  if (missing !== undefined) throw resourceExhausted(`${missing}; node ${ctx.config.nodeId} cannot hold this volume`);
  const requisite = req.accessibility_requirements?.requisite ?? [];
  if (requisite.length > 0 && !requisite.some((t) => ctx.isThisNode(t.segments))) {
    throw resourceExhausted(`node ${ctx.config.nodeId} is not among the requisite topologies; this driver provisions only on its own node`);
  }
  const accessType = caps[0]?.accessType ?? 'mount';
  const backend = catalog.pool(params.pool);
  const source = req.volume_content_source ? resolveSource(req.volume_content_source, catalog, ctx.config.nodeId) : undefined;
  // The class's fsType parameter must suit the pool even when the capability names the filesystem.
  if (params.fsType !== '' && accessType === 'mount') volumeFsType(backend, accessType, params.fsType);
  // A copy has its source's filesystem unless the call names one (which must then be it).
  const fsType = volumeFsType(backend, accessType, caps.find((c) => c.fsType !== '')?.fsType || params.fsType || source?.fsType || '');
  if (source !== undefined) checkAgainstSource(source, params.pool, backend, accessType, fsType, range.limit);
  // A volume made by a driver before ids carried their node is found under its old id.
  const legacyId = legacyVolumeIdForName(name);
  const id = catalog.get(legacyId) !== undefined ? legacyId : objectIdForName('volume', name, ctx.config.nodeId);

  return ctx.locks.with(source === undefined ? [id] : [id, source.id], async () => {
    let existing = catalog.get(id);
    // Under the lock no create or delete of this name is running, so a record that is not
    // ready is one whose undo failed part-way: finish removing it and make the volume anew.
    if (existing !== undefined && existing.state !== 'ready') {
      await catalog.destroy(existing);
      existing = undefined;
    }
    if (existing) {
      const why = incompatibility(existing, range, params.pool, caps, req.parameters, source);
      if (why !== undefined) throw alreadyExists(`volume "${name}" already exists and is incompatible: ${why}`);
      ctx.createAnswers.note(id);
      return { volume: toCsiVolume(ctx, existing) };
    }
    const size = newVolumeBytes(backend, fsType, range, source?.sizeBytes ?? 0);
    const newRecord = (): VolumeRecord => newVolumeRecord({ id, name, pool: params.pool, capacityBytes: size, accessType, fsType, parameters: req.parameters, ephemeral: false,
      formatted: source?.formatted ?? !backend.capabilities.needsFormat,
      ...(source?.filesystemBytes !== undefined ? { filesystemBytes: source.filesystemBytes } : {}),
      ...(source !== undefined ? { contentSource: source.named } : {}) });
    // A clone of a mounted volume freezes its filesystem for the copy, as a snapshot does.
    const freezePath = source !== undefined && 'volume' in source.source && backend.snapshots !== undefined
      ? await freezePathFor(source.source.volume, backend, backend.snapshots) : undefined;
    // The pod's other claims are reserved with this one, or this one is refused (src/driver/cluster/reservations).
    const holds = await ctx.reservations?.prepare(req.parameters, { pool: params.pool, bytes: size });
    const opts = { ...(source !== undefined ? { source: source.source } : {}), ...(freezePath !== undefined ? { freezePath } : {}), ...(holds !== undefined ? { holds } : {}) };
    // A full pool or one whose max-volume-size is smaller: answered RESOURCE_EXHAUSTED, so
    // the provisioner tries another node.
    let record = newRecord();
    try {
      await catalog.provision(record, opts);
    } catch (err) {
      // Refused at the space check (nothing made): reservations of pods gone since may be what stood in the way.
      if (holds === undefined || catalog.get(id) !== undefined || !(await ctx.reservations?.pruneFor(err, holds.keys))) throw err;
      record = newRecord();
      await catalog.provision(record, opts);
    }
    ctx.createAnswers.note(id);
    return { volume: toCsiVolume(ctx, record) };
  });
}

export async function deleteVolume(ctx: DriverContext, req: csi.DeleteVolumeRequest__Output): Promise<csi.DeleteVolumeResponse> {
  const { catalog } = ctx;
  const id = requireVolumeId(req.volume_id);
  return ctx.locks.with([id], async () => {
    const r = catalog.get(id);
    if (!r) {
      // Deleting what is gone is success (idempotency), but not for a volume another node
      // holds: an OK would let Kubernetes forget storage that still takes that node's space.
      const holder = holderOf('volume', id, ctx.config.nodeId);
      if (holder.kind === 'node' || holder.kind === 'hashed-node') {
        throw failedPrecondition(`volume ${id} is held by ${describeHolder(holder)}, not ${ctx.config.nodeId}; it is deleted there`);
      }
      return {};
    }
    const dependent = catalog.pool(r.pool).snapshots?.independentSnapshots === false ? catalog.snapshotsOf(id) : [];
    if (dependent.length > 0) {
      throw failedPrecondition(`volume ${id} has snapshots that depend on it in pool ${r.pool} (${dependent.map((s) => s.id).join(', ')}); delete them first`);
    }
    if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume; it goes away with NodeUnpublishVolume`);
    const holders = await holdersOf(r, catalog.pool(r.pool));
    if (holders.length > 0) throw failedPrecondition(`volume ${id} is in use: ${holders.join(', ')}`);
    await catalog.destroy(r);
    return {};
  });
}

export async function validateVolumeCapabilities(ctx: DriverContext, req: csi.ValidateVolumeCapabilitiesRequest__Output): Promise<csi.ValidateVolumeCapabilitiesResponse> {
  const { catalog } = ctx;
  const id = requireVolumeId(req.volume_id);
  if (req.volume_capabilities.length === 0) throw invalidArgument('volume_capabilities is required');
  const r = catalog.get(id);
  if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist`);
  for (const [i, cap] of req.volume_capabilities.entries()) {
    const parsed = parseCapability(cap, `volume_capabilities[${i}]`);
    if (typeof parsed === 'string') return { message: parsed };
    if (parsed.accessType !== r.accessType) return { message: `volume ${id} was created for ${r.accessType} access` };
    if (parsed.fsType !== '' && r.accessType === 'mount' && parsed.fsType !== r.fsType) return { message: `volume ${id} holds ${r.fsType}, not ${parsed.fsType}` };
  }
  if (Object.keys(req.parameters).length > 0 && !sameParameters(req.parameters, r.parameters)) {
    return { message: `volume ${id} was created with other parameters` };
  }
  return {
    confirmed: {
      volume_context: req.volume_context,
      volume_capabilities: req.volume_capabilities,
      parameters: req.parameters,
    },
  };
}

export async function listVolumes(ctx: DriverContext, req: csi.ListVolumesRequest__Output): Promise<csi.ListVolumesResponse> {
  const { catalog } = ctx;
  const all = catalog.list().filter((r) => r.state === 'ready' && !r.ephemeral);
  const { page, nextToken } = pageOf(all, req.max_entries, req.starting_token, 'volume');
  return { entries: page.map((r) => ({ volume: toCsiVolume(ctx, r) })), next_token: nextToken };
}

export async function getCapacity(ctx: DriverContext, req: csi.GetCapacityRequest__Output): Promise<csi.GetCapacityResponse> {
  const { catalog } = ctx;
  const params = readParameters(req.parameters, catalog);
  const zero = { available_capacity: '0', maximum_volume_size: { value: '0' }, minimum_volume_size: { value: '0' } };
  if (req.accessible_topology && !ctx.isThisNode(req.accessible_topology.segments)) return zero;
  if (poolMissing(params, catalog) !== undefined) return zero;
  for (const [i, cap] of req.volume_capabilities.entries()) {
    if (typeof parseCapability(cap, `volume_capabilities[${i}]`, { unsetMeansAny: true }) === 'string') return zero;
  }
  // One statfs: the disk's free space moves with whatever else writes there.
  await catalog.refresh(params.pool);
  await ctx.reservations?.pruneBeforeCapacity(params.pool);
  const backend = catalog.pool(params.pool);
  // Space reserved for pods' other claims is not on offer (src/driver/cluster/reservations).
  const available = ctx.reservations?.reportedFree(params.pool) ?? catalog.availableBytes(params.pool);
  const { minimum, maximum } = capacityFigures(available, backend, params.fsType);
  return {
    available_capacity: String(available),
    maximum_volume_size: { value: String(maximum) },
    minimum_volume_size: { value: String(minimum) },
  };
}
