// Each subcommand: the reads it needs (as few as answer it), the report, and its printing in the format asked for.
import type { V1Pod } from '@kubernetes/client-node';
import { CAPACITY_DRIVER_LABEL } from '../driver/cluster/node-loss/lost-nodes.js';
import { nodeLossLeaseName } from '../driver/cluster/node-loss/node-loss-options.js';
import { orphanColumns, orphanRows } from './orphans.js';
import type { PluginArgs, Subcommand } from './plugin-args.js';
import { scrapeDrivers } from './driver-scrape.js';
import { ClusterError, type PluginCluster } from './plugin-cluster.js';
import { structured, table, useColour } from './plugin-output.js';
import { isDriverEvent, POOL_COLUMNS, statusReport, WARNING_COLUMNS } from './status.js';
import { VOLUME_COLUMNS, volumeRows } from './volumes.js';
import { claimNamesOf, consumersOf, whyReport, WHY_COLUMNS, type ClaimInput, type WhyReport } from './why.js';

export async function runCommand(args: PluginArgs, command: Subcommand, cluster: PluginCluster, stream: NodeJS.WriteStream): Promise<string> {
  const colour = useColour(stream);
  const format = args.output;
  const { driverName } = args;
  switch (command) {
    case 'status': {
      // PVs and capacity objects before Nodes: lostNodes' rule (a node named first and missing later was deleted).
      const [pvs, capacities] = await Promise.all([cluster.volumes(driverName), cluster.capacities(`${CAPACITY_DRIVER_LABEL}=${driverName}`)]);
      const [nodes, csiNodes, classes, events, lease, drivers] = await Promise.all([
        cluster.nodes(), cluster.csiNodes(), cluster.classes(driverName), cluster.nodeEvents(), cluster.lease(args.driverNamespace, nodeLossLeaseName(driverName)),
        scrapeDrivers(cluster, args.driverNamespace, driverName),
      ]);
      const report = statusReport({ driverName, nodes, csiNodes, classes, capacities, pvs, events, lease, drivers });
      if (format === 'json' || format === 'yaml') return structured('LodeStatus', driverName, report, format);
      const parts = [table(report.pools, POOL_COLUMNS, format, colour)];
      if (report.lostNodes.length > 0) parts.push(`\nLost nodes: ${report.lostNodes.map((l) => `${l.name} (${l.signal})`).join(', ')}\n`);
      if (report.classesWithoutSpace.length > 0) parts.push(`\nClasses no node has space for: ${report.classesWithoutSpace.map((c) => `${c.storageClass} (pool "${c.pool}")`).join(', ')}\n`);
      if (report.nodeLossLeader !== null) parts.push(`\nNode-loss handler: ${report.nodeLossLeader.holder || '<no holder>'}${report.nodeLossLeader.renewTime !== null ? ` (lease renewed ${report.nodeLossLeader.renewTime})` : ''}\n`);
      if (report.warnings.length > 0) parts.push(`\nWarnings from the driver:\n${table(report.warnings, WARNING_COLUMNS, format, colour)}`);
      // Partial figures are still an answer (exit code 0): the note says what is missing and why.
      if (report.driverNote !== null) parts.push(`\nNote: ${report.driverNote}\n`);
      return parts.join('');
    }
    case 'volumes': {
      const [pvs, pods, contents] = await Promise.all([cluster.volumes(driverName), cluster.pods(), cluster.snapshotContents()]);
      const rows = volumeRows(driverName, pvs, pods, contents);
      if (format === 'json' || format === 'yaml') return structured('LodeVolumeList', driverName, rows, format);
      return rows.length === 0 ? `No ${driverName} volumes found.\n` : table(rows, VOLUME_COLUMNS, format, colour);
    }
    case 'orphans': {
      // Events first: a PV made after the list of Events still clears the report it contradicts.
      const events = await cluster.nodeEvents();
      const pvs = await cluster.volumes(driverName);
      const rows = orphanRows(driverName, events, pvs);
      if (format === 'json' || format === 'yaml') return structured('LodeOrphanList', driverName, rows, format);
      return rows.length === 0 ? 'No orphaned volumes reported.\n' : table(rows, orphanColumns(Date.now()), format, colour);
    }
    case 'why': {
      const report = await why(args, cluster);
      if (format === 'json' || format === 'yaml') return structured('LodeWhy', driverName, report, format);
      const head = [`${report.target}: ${report.phase}`, ...report.summary.map((s) => `  ${s}`)];
      if (report.scheduler !== null) head.push(`  scheduler: ${report.scheduler}`);
      for (const d of report.driver) head.push(`  driver: ${d}`);
      return `${head.join('\n')}\n\n${table(report.nodes, WHY_COLUMNS, format, colour)}`;
    }
  }
}

/** The target's claims and pods: pod/NAME, pvc/NAME, or a plain name tried as a claim, then as a pod. */
async function why(args: PluginArgs, cluster: PluginCluster): Promise<WhyReport> {
  const operand = args.operands[0] ?? '';
  const namespace = args.namespace ?? cluster.namespace;
  const slash = operand.indexOf('/');
  const kind = slash < 0 ? '' : operand.slice(0, slash).toLowerCase();
  const name = slash < 0 ? operand : operand.slice(slash + 1);
  const podKinds = ['pod', 'pods', 'po'];
  const claimKinds = ['pvc', 'pvcs', 'persistentvolumeclaim', 'persistentvolumeclaims'];
  if (kind !== '' && !podKinds.includes(kind) && !claimKinds.includes(kind)) throw new ClusterError(`why answers for a claim or a pod (pvc/NAME, pod/NAME), not "${kind}"`);
  const claim = podKinds.includes(kind) ? undefined : await cluster.claim(namespace, name);
  const pod = claim !== undefined || claimKinds.includes(kind) ? undefined : await cluster.pod(namespace, name);
  if (claim === undefined && pod === undefined) {
    const what = claimKinds.includes(kind) ? 'persistentvolumeclaims' : podKinds.includes(kind) ? 'pods' : 'persistentvolumeclaims or pods';
    throw new ClusterError(`Error from server (NotFound): ${what} "${name}" not found in namespace "${namespace}"`);
  }
  const [nodes, csiNodes, capacities, pvs] = await Promise.all([cluster.nodes(), cluster.csiNodes(), cluster.capacities(`${CAPACITY_DRIVER_LABEL}=${args.driverName}`), cluster.volumes(args.driverName)]);
  let pods: V1Pod[];
  let claims: ClaimInput[];
  let scheduler: string | null = null;
  if (pod !== undefined) {
    pods = [pod];
    const found = await Promise.all(claimNamesOf(pod).map((n) => cluster.claim(namespace, n)));
    claims = await withClasses(cluster, found.filter((c) => c !== undefined));
    scheduler = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status !== 'True')?.message ?? null;
  } else {
    pods = consumersOf(claim!, await cluster.podsIn(namespace));
    claims = await withClasses(cluster, [claim!]);
    const waiting = pods.find((p) => p.spec?.nodeName === undefined || p.spec.nodeName === '');
    scheduler = waiting?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status !== 'True')?.message ?? null;
  }
  // What the driver's leader said on the unbound claims (a pool on no node, a size below the minimum).
  const claimEvents = (n: string) => cluster.eventsAbout(namespace, 'PersistentVolumeClaim', n);
  const unbound = claims.filter((c) => (c.claim.spec?.volumeName ?? '') === '');
  const driverEvents = (await Promise.all(unbound.map((c) => claimEvents(c.claim.metadata?.name ?? '')))).flat()
    .filter((e) => e.type === 'Warning' && isDriverEvent(e, args.driverName));
  if (scheduler === null) {
    // The scheduler's FailedScheduling Event on the pod (or the provisioner's on the claim) says it when the condition does not.
    const about = pod ?? pods[0];
    const events = about !== undefined
      ? await cluster.eventsAbout(namespace, 'Pod', about.metadata?.name ?? '')
      : await claimEvents(name);
    const last = events.filter((e) => e.type === 'Warning' && !isDriverEvent(e, args.driverName)).sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? '').localeCompare(String(b.lastTimestamp ?? b.eventTime ?? ''))).at(-1);
    if (last?.message !== undefined) scheduler = `${last.reason ?? ''}: ${last.message}`;
  }
  const target = pod !== undefined ? `pod/${namespace}/${name}` : `pvc/${namespace}/${name}`;
  const phase = pod !== undefined ? pod.status?.phase ?? 'Unknown' : claim?.status?.phase ?? 'Pending';
  return whyReport({ driverName: args.driverName, target, phase, pods, claims, nodes, csiNodes, capacities, pvs, scheduler, driverEvents });
}

async function withClasses(cluster: PluginCluster, claims: NonNullable<Awaited<ReturnType<PluginCluster['claim']>>>[]): Promise<ClaimInput[]> {
  return Promise.all(claims.map(async (claim) => {
    const className = claim.spec?.storageClassName;
    return { claim, storageClass: className !== undefined && className !== '' ? await cluster.storageClass(className) : undefined };
  }));
}
