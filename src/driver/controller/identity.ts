// The CSI Identity service: who this plugin is, what it can do, and whether it is ready.
import type * as csi from '../../csi/types.js';
import { describeQuarantine } from '../../pool/quarantine.js';
import type { DriverContext } from '../context/context.js';
import { failedPrecondition } from '../rpc/errors.js';

/** Why the driver cannot serve volumes right now, or undefined when it can. */
export async function readinessProblem(ctx: DriverContext): Promise<string | undefined> {
  for (const name of ctx.catalog.poolNames()) {
    const problem = await ctx.catalog.pool(name).healthProblem();
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Most quarantined volumes named in one health answer; the rest are counted (the log has them all). */
const MAX_NAMED_QUARANTINED = 10;

/**
 * What an operator should know while the driver is ready: the quarantined volumes. They do
 * not make it unready: it serves every other volume, and failing the probes would have the
 * driver restarted over and over for a state only an operator can change.
 */
export function readinessWarnings(ctx: DriverContext): string[] {
  const quarantined = ctx.catalog.quarantined();
  const named = quarantined.slice(0, MAX_NAMED_QUARANTINED).map(describeQuarantine);
  if (quarantined.length > named.length) named.push(`and ${quarantined.length - named.length} more quarantined volumes (see the driver log)`);
  return named;
}

export async function getPluginInfo(ctx: DriverContext): Promise<csi.GetPluginInfoResponse> {
  return {
    name: ctx.config.driverName,
    vendor_version: ctx.config.vendorVersion,
    // Which backends serve this node's pools, as the pools' own configuration says.
    manifest: { backend: [...new Set(ctx.config.pools.map((p) => p.backend))].join(','), pools: ctx.catalog.poolNames().join(',') },
  };
}

export async function getPluginCapabilities(): Promise<csi.GetPluginCapabilitiesResponse> {
  return {
    capabilities: [
      { service: { type: 'CONTROLLER_SERVICE' } },
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
      { volume_expansion: { type: 'ONLINE' } },
    ],
  };
}

export async function probe(ctx: DriverContext): Promise<csi.ProbeResponse> {
  // An unhealthy plugin answers with an error, so the reason reaches the caller's log.
  // Quarantined volumes leave it ready (see readinessWarnings): CSI Probe carries no detail.
  const problem = await readinessProblem(ctx);
  if (problem !== undefined) throw failedPrecondition(problem);
  return { ready: { value: true } };
}

export function identityService(ctx: DriverContext) {
  return {
    GetPluginInfo: () => getPluginInfo(ctx),
    GetPluginCapabilities: () => getPluginCapabilities(),
    Probe: () => probe(ctx),
  };
}
