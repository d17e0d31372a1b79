// The Pod the driver's DaemonSet runs on one bench node: its name, labels and owner as the DaemonSet controller makes them, and the driver container's ports, the metrics port among them.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ContainerPort, V1Pod } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { DAEMONSET_PATH } from '../sidecars/daemonset-args.js';

/**
 * deploy/components/monitoring's patch: it serves the driver's /metrics on the pod network under
 * the port name "metrics". The bench's driver pods carry that port, since a pod proxy (the only
 * way to the metrics a client of the bench has) needs it; the base keeps the metrics on loopback.
 */
export const MONITORING_PORTS_PATH = path.resolve(fileURLToPath(new URL('../../../../deploy/components/monitoring/metrics-ports.yaml', import.meta.url)));

interface Container { name: string; ports?: V1ContainerPort[] }
interface DaemonSet {
  metadata?: { name?: string; namespace?: string };
  spec?: { template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Container[] } } };
}

function driverContainerPorts(file: string): V1ContainerPort[] {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  return (ds.spec?.template?.spec?.containers ?? []).find((c) => c.name === 'lode')?.ports ?? [];
}

/** The driver container's ports: the base DaemonSet's and the monitoring component's, by name (the component's win). */
export function driverPorts(base = DAEMONSET_PATH, monitoring = MONITORING_PORTS_PATH): V1ContainerPort[] {
  const byName = new Map<string, V1ContainerPort>();
  for (const p of [...driverContainerPorts(base), ...driverContainerPorts(monitoring)]) byName.set(p.name ?? String(p.containerPort), p);
  return [...byName.values()];
}

/** The DaemonSet's Pod on `node`, owned by the DaemonSet whose uid is `daemonSetUid` (not served by the bench, only named). */
export function driverPod(node: string, daemonSetUid: string, file = DAEMONSET_PATH): V1Pod {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  const name = ds.metadata?.name ?? 'lode-node';
  return {
    metadata: {
      name: `${name}-${node}`, namespace: ds.metadata?.namespace ?? 'lode-system', labels: { ...(ds.spec?.template?.metadata?.labels ?? {}) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name, uid: daemonSetUid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'lode', image: 'lode', ports: driverPorts(file) }] },
  };
}
