// Flags of `lode driver`, each also readable from an environment variable (for the DaemonSet).
import { parseArgs } from 'node:util';
import * as path from 'node:path';
import type { DriverConfig } from '../driver/context/config.js';
import { DEFAULT_API_TIMEOUT_MS, type KubeOptions } from '../kube/kube-options.js';
import { DEFAULT_LEASE_TIMINGS, leaseTimingsProblem, type LeaseTimings } from '../kube/leader-election.js';
import { DEFAULT_TEMPLATE_CAPACITY_PERIOD_MS, type TemplateCapacityOptions } from '../driver/cluster/template-capacity/template-capacity.js';
import { DEFAULT_NAMESPACE, DEFAULT_NODE_LOSS_PERIOD_MS, NODE_LOSS_MODES, type NodeLossMode, type NodeLossOptions } from '../driver/cluster/node-loss/node-loss-options.js';
import { DEFAULT_RESERVATION_TTL_MS } from '../driver/cluster/reservations/pod-reservations.js';
import { DEFAULT_ORPHAN_CHECK_S, DEFAULT_ORPHAN_GRACE_S, type OrphanOptions } from '../driver/cluster/orphans/orphan-options.js';
import { isLogLevel, type LogLevel } from '../util/log.js';
import { checkPools, DEFAULT_PROFILE_LABEL, NoPoolEntryError, profileEntries, readPoolConfig, type PoolConfigChoice } from './pool-config.js';
import { ConfigDirProfiles } from './profile-pools.js';

export const DRIVER_USAGE = `usage: lode driver [flags]

  --endpoint URL         CSI socket, unix:///path/csi.sock            (env LODE_ENDPOINT)
  --node-id ID           this node's name, as Kubernetes knows it      (env LODE_NODE_ID, or NODE_NAME)
  --driver-name NAME     CSI driver name (default lode.csi.dev)       (env LODE_DRIVER_NAME)
  --pool SPEC            a storage pool, repeatable:                   (env LODE_POOLS, ';'-separated)
                         NAME=DIR[,backend=loop|dir|lvm][,size=10Gi][,default-size=1Gi]
                         [,max-volume-size=5Gi][,reserve=20%|5Gi][,inline-max-size=1Gi]
                         [,direct-io=on|off] (loop: image files; dir: quota
                         directories on XFS/ext4 project quotas or btrfs qgroups)
                         [,vg=VG][,thin-pool=LV][,overprovision=N][,thin-alert=90%]
                         [,snapshot-size=20%|2Gi] (lvm: logical volumes of VG,
                         thin in LV if given; DIR then holds only the records;
                         snapshot-size: thick snapshots' copy-on-write area)
  --pool-config DIR      pools from DIR/<node-id>, else DIR/default,   (env LODE_POOL_CONFIG)
                         one SPEC per line (a mounted ConfigMap); instead of --pool
  --profile-label KEY    with --pool-config and API access: the Node   (env LODE_PROFILE_LABEL)
                         label whose value V picks DIR/profile.V when
                         DIR has no entry of this node's name (default
                         node.kubernetes.io/instance-type); followed
                         while running (docs/driver.md, "Pool profiles")
  --pool-root DIR        pool directories must lie under DIR; those   (env LODE_POOL_ROOT)
                         under DIR/pools/ are created when missing
  --target-root DIR      stage/publish targets must lie below it,      (env LODE_TARGET_ROOTS, ':'-separated)
                         repeatable (default /var/lib/kubelet)
  --metrics-address A    serve /metrics and /healthz on HOST:PORT      (env LODE_METRICS_ADDRESS)
  --controller-expansion advertise controller EXPAND_VOLUME; leave off (env LODE_CONTROLLER_EXPANSION=true)
                         in clusters, where NodeExpandVolume grows volumes on their node
  --log-level L          debug, info, warn or error (default info)     (env LODE_LOG_LEVEL)
  --capacity-refresh S   re-read the pools' free space every S seconds (env LODE_CAPACITY_REFRESH)
                         (default 30; GetCapacity re-reads it too)

  Kubernetes API access (off unless one of these is given; docs/api-access.md):
  --in-cluster           use the pod's service account                 (env LODE_IN_CLUSTER=true)
  --kubeconfig FILE      use FILE's current context                    (env LODE_KUBECONFIG)
  --api-timeout S        longest wait on the API inside a CSI call     (env LODE_API_TIMEOUT)
                         (default 3; seconds, 1 to 60)
  --node-loss MODE       on, dry-run or off: the leader-elected        (env LODE_NODE_LOSS)
                         handler of lost nodes (default on with API
                         access; it acts only on classes that set
                         onNodeLoss: delete-claims); its leader also
                         says on claims no node can make why (in
                         dry-run too)
  --namespace NS         the driver's own namespace: its Lease and the (env LODE_NAMESPACE, or POD_NAMESPACE)
                         provisioner's capacity objects (default lode-system)
  --leader-lease-duration S                                            (env LODE_LEADER_LEASE_DURATION)
                         a lease nobody renews expires after S
                         (default 15; whole seconds)
  --leader-renew-deadline S                                            (env LODE_LEADER_RENEW_DEADLINE)
                         the leader stops acting after S without a
                         renewal (default 10; seconds, may be decimal)
  --leader-retry-period S                                              (env LODE_LEADER_RETRY_PERIOD)
                         pause between tries to acquire or renew
                         (default 2; seconds, may be decimal)
  --node-loss-period S   the leader looks at its watched PVs, Nodes    (env LODE_NODE_LOSS_PERIOD)
                         and waiting claims on each change, and at
                         least every S
                         (default 10; seconds, may be decimal)
  --pod-reservations B   true or false: reserve a pending pod's other  (env LODE_POD_RESERVATIONS)
                         claims with the first, refuse all if they do
                         not fit (default true with API access)
  --reservation-ttl S    seconds a reservation waits for its claim's   (env LODE_RESERVATION_TTL)
                         CreateVolume (default 120; 1 to 3600)
  --orphan-check S       look for volumes no PV names every S seconds  (env LODE_ORPHAN_CHECK)
                         (default 300; 0 = off)
  --orphan-grace S       report one no PV has named for S seconds      (env LODE_ORPHAN_GRACE)
                         (default 3600)
  --delete-orphans       delete reported orphans nothing uses          (env LODE_DELETE_ORPHANS=true)
  --template-capacity M  on or off: the leader publishes, per profile  (env LODE_TEMPLATE_CAPACITY)
                         and class, the capacity of a fresh node for
                         the cluster autoscaler's template nodes
                         (default on with API access and a --pool-config
                         holding profile.* entries at start)
  --template-capacity-period S                                         (env LODE_TEMPLATE_CAPACITY_PERIOD)
                         the leader's pause between passes (default 60)
  --version              print the version and exit
`;

export interface DriverFlags {
  config: DriverConfig;
  logLevel: LogLevel;
  /** Where the pool list came from: the --pool-config file, or undefined for --pool / LODE_POOLS. */
  poolFile?: string;
}

const NODE_ID = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$/;
/** A label key: an optional DNS-subdomain prefix and '/', then a name of up to 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DRIVER_NAME = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;

/** Parses argv (and env) into a config; throws an Error whose message is meant for the operator. */
export async function parseDriverFlags(argv: string[], env: NodeJS.ProcessEnv, vendorVersion: string): Promise<DriverFlags | 'help'> {
  const { values } = parseArgs({
    args: argv,
    options: {
      endpoint: { type: 'string' },
      'node-id': { type: 'string' },
      'driver-name': { type: 'string' },
      pool: { type: 'string', multiple: true },
      'pool-config': { type: 'string' },
      'pool-root': { type: 'string' },
      'profile-label': { type: 'string' },
      'capacity-refresh': { type: 'string' },
      'target-root': { type: 'string', multiple: true },
      'metrics-address': { type: 'string' },
      'controller-expansion': { type: 'boolean' },
      'log-level': { type: 'string' },
      'in-cluster': { type: 'boolean' },
      kubeconfig: { type: 'string' },
      'api-timeout': { type: 'string' },
      'node-loss': { type: 'string' },
      namespace: { type: 'string' },
      'leader-lease-duration': { type: 'string' },
      'leader-renew-deadline': { type: 'string' },
      'leader-retry-period': { type: 'string' },
      'node-loss-period': { type: 'string' },
      'pod-reservations': { type: 'string' },
      'reservation-ttl': { type: 'string' },
      'orphan-check': { type: 'string' },
      'orphan-grace': { type: 'string' },
      'delete-orphans': { type: 'boolean' },
      'template-capacity': { type: 'string' },
      'template-capacity-period': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const endpoint = values.endpoint ?? env.LODE_ENDPOINT;
  if (!endpoint) throw new Error('--endpoint is required (e.g. unix:///var/lib/kubelet/plugins/lode.csi.dev/csi.sock)');
  const nodeId = values['node-id'] ?? env.LODE_NODE_ID ?? env.NODE_NAME;
  if (!nodeId) throw new Error('--node-id is required (the Kubernetes node name)');
  if (!NODE_ID.test(nodeId)) throw new Error(`--node-id "${nodeId}" is not a valid node name`);
  const driverName = values['driver-name'] ?? env.LODE_DRIVER_NAME ?? 'lode.csi.dev';
  if (!DRIVER_NAME.test(driverName)) throw new Error(`--driver-name "${driverName}" must be a DNS-style name of at most 63 characters`);
  const listed = values.pool ?? (env.LODE_POOLS ?? '').split(';').map((s) => s.trim()).filter((s) => s !== '');
  const poolConfig = values['pool-config'] ?? (env.LODE_POOL_CONFIG || undefined);
  if (poolConfig !== undefined && listed.length > 0) throw new Error('give pools either with --pool (LODE_POOLS) or with --pool-config (LODE_POOL_CONFIG), not both');
  const poolRoot = values['pool-root'] ?? (env.LODE_POOL_ROOT || undefined);
  if (poolRoot !== undefined && !path.isAbsolute(poolRoot)) throw new Error(`--pool-root "${poolRoot}" must be an absolute path`);
  const kube = kubeOptions(values, env);
  const profileLabel = values['profile-label'] ?? (env.LODE_PROFILE_LABEL || undefined);
  if (profileLabel !== undefined && (poolConfig === undefined || kube === undefined)) throw new Error('--profile-label needs --pool-config and API access (--in-cluster or --kubeconfig): the driver reads its Node\'s label');
  if (profileLabel !== undefined && !LABEL_KEY.test(profileLabel)) throw new Error(`--profile-label "${profileLabel}" is not a label key ([prefix/]name)`);
  // With API access the pools are chosen again at start by the Node's profile label; a node
  // with neither its own entry nor "default" may then rely on a profile alone.
  const profiles = poolConfig !== undefined && kube !== undefined ? new ConfigDirProfiles(poolConfig, nodeId, profileLabel ?? DEFAULT_PROFILE_LABEL, poolRoot) : undefined;
  let chosen: PoolConfigChoice | undefined;
  if (poolConfig !== undefined) {
    try {
      chosen = await readPoolConfig(poolConfig, nodeId);
    } catch (err) {
      if (!(err instanceof NoPoolEntryError && profiles !== undefined && (await profileEntries(poolConfig)).size > 0)) throw err;
    }
  }
  const poolSpecs = chosen?.specs ?? listed;
  if (poolSpecs.length === 0 && profiles === undefined) throw new Error('at least one --pool NAME=DIR is required');
  const pools = await checkPools(poolSpecs, chosen?.file, poolRoot);
  const roots = values['target-root'] ?? (env.LODE_TARGET_ROOTS ? env.LODE_TARGET_ROOTS.split(':').filter((s) => s !== '') : ['/var/lib/kubelet']);
  for (const r of roots) if (!path.isAbsolute(r) || r === '/') throw new Error(`--target-root "${r}" must be an absolute directory other than /`);
  const logLevel = values['log-level'] ?? env.LODE_LOG_LEVEL ?? 'info';
  if (!isLogLevel(logLevel)) throw new Error(`--log-level "${logLevel}" is not one of debug, info, warn, error`);
  const metricsAddress = values['metrics-address'] ?? env.LODE_METRICS_ADDRESS;
  const refresh = values['capacity-refresh'] ?? env.LODE_CAPACITY_REFRESH ?? '30';
  const refreshSeconds = wholeSeconds('capacity-refresh', refresh, 1, 86_400);
  const nodeLoss = nodeLossOptions(values, env, kube !== undefined);
  const podReservations = reservationOptions(values, env, kube !== undefined);
  const orphans = orphanOptions(values, env, kube !== undefined);
  // On by default only where the directory holds profiles at start: every node's driver then
  // campaigns for the Lease, one read every --leader-retry-period, a cost not worth paying for nothing.
  const hasProfiles = profiles !== undefined && poolConfig !== undefined && (await profileEntries(poolConfig)).size > 0;
  const templateCapacity = templateCapacityOptions(values, env, profiles !== undefined, hasProfiles);
  return {
    config: {
      endpoint, nodeId, driverName, vendorVersion, pools,
      ...(kube !== undefined ? { kube, podReservations } : {}),
      ...(nodeLoss !== undefined ? { nodeLoss } : {}),
      ...(orphans !== undefined ? { orphans } : {}),
      ...(profiles !== undefined ? { poolProfiles: profiles } : {}),
      ...(templateCapacity !== undefined ? { templateCapacity } : {}),
      controllerExpansion: values['controller-expansion'] ?? env.LODE_CONTROLLER_EXPANSION === 'true',
      targetRoots: roots.map((r) => path.resolve(r)),
      ...(metricsAddress ? { metricsAddress } : {}),
      capacityRefreshSeconds: refreshSeconds,
    },
    logLevel,
    ...(chosen ? { poolFile: chosen.file } : {}),
  };
}

/** Pod reservations: on with API access unless switched off; a lifetime given without API access is a mistake worth saying. */
function reservationOptions(values: { 'pod-reservations'?: string; 'reservation-ttl'?: string }, env: NodeJS.ProcessEnv, api: boolean): { enabled: boolean; ttlMs: number } {
  const enabled = values['pod-reservations'] ?? (env.LODE_POD_RESERVATIONS || 'true');
  if (enabled !== 'true' && enabled !== 'false') throw new Error(`--pod-reservations "${enabled}" must be true or false`);
  const ttl = values['reservation-ttl'] ?? (env.LODE_RESERVATION_TTL || undefined);
  if (ttl !== undefined && !api) throw new Error('--reservation-ttl needs --in-cluster or --kubeconfig (pod reservations read the API)');
  return { enabled: enabled === 'true', ttlMs: ttl !== undefined ? wholeSeconds('reservation-ttl', ttl, 1, 3600) * 1000 : DEFAULT_RESERVATION_TTL_MS };
}

/** The API access asked for, or undefined: the driver then runs with no API at all, as before. */
function kubeOptions(values: { 'in-cluster'?: boolean; kubeconfig?: string; 'api-timeout'?: string }, env: NodeJS.ProcessEnv): KubeOptions | undefined {
  const inCluster = values['in-cluster'] ?? env.LODE_IN_CLUSTER === 'true';
  const kubeconfig = values.kubeconfig ?? (env.LODE_KUBECONFIG || undefined);
  const timeout = values['api-timeout'] ?? env.LODE_API_TIMEOUT;
  if (inCluster && kubeconfig !== undefined) throw new Error('give API access either with --in-cluster or with --kubeconfig, not both');
  if (!inCluster && kubeconfig === undefined) {
    if (timeout !== undefined) throw new Error('--api-timeout needs --in-cluster or --kubeconfig');
    return undefined;
  }
  if (kubeconfig !== undefined && !path.isAbsolute(kubeconfig)) throw new Error(`--kubeconfig "${kubeconfig}" must be an absolute path`);
  const timeoutMs = timeout !== undefined ? wholeSeconds('api-timeout', timeout, 1, 60) * 1000 : DEFAULT_API_TIMEOUT_MS;
  return {
    source: kubeconfig !== undefined ? { kind: 'kubeconfig', path: kubeconfig } : { kind: 'in-cluster' },
    callTimeoutMs: timeoutMs,
  };
}

type NodeLossValues = {
  'node-loss'?: string; namespace?: string; 'leader-lease-duration'?: string;
  'leader-renew-deadline'?: string; 'leader-retry-period'?: string; 'node-loss-period'?: string;
};

/** Seconds, decimals allowed, from 0.1 to 3600, as milliseconds. */
function decimalSeconds(flag: string, value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n < 0.1 || n > 3600) throw new Error(`--${flag} "${value}" must be a number of seconds from 0.1 to 3600`);
  return Math.round(n * 1000);
}

const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

type LeaderValues = NodeLossValues & { 'template-capacity'?: string; 'template-capacity-period'?: string };

/** The Leases' namespace and timings, shared by every leader-elected feature. */
function leaderOptions(values: LeaderValues, env: NodeJS.ProcessEnv): { namespace: string; timings: LeaseTimings } {
  const namespace = values.namespace ?? (env.LODE_NAMESPACE || env.POD_NAMESPACE || DEFAULT_NAMESPACE);
  if (!NAMESPACE.test(namespace)) throw new Error(`--namespace "${namespace}" is not a namespace name`);
  const pick = (flag: keyof NodeLossValues, envName: string): string | undefined => values[flag] ?? (env[envName] || undefined);
  const duration = pick('leader-lease-duration', 'LODE_LEADER_LEASE_DURATION');
  const deadline = pick('leader-renew-deadline', 'LODE_LEADER_RENEW_DEADLINE');
  const retry = pick('leader-retry-period', 'LODE_LEADER_RETRY_PERIOD');
  const timings = {
    leaseDurationSeconds: duration !== undefined ? wholeSeconds('leader-lease-duration', duration, 1, 3600) : DEFAULT_LEASE_TIMINGS.leaseDurationSeconds,
    renewDeadlineMs: deadline !== undefined ? decimalSeconds('leader-renew-deadline', deadline) : DEFAULT_LEASE_TIMINGS.renewDeadlineMs,
    retryPeriodMs: retry !== undefined ? decimalSeconds('leader-retry-period', retry) : DEFAULT_LEASE_TIMINGS.retryPeriodMs,
  };
  const problem = leaseTimingsProblem(timings);
  if (problem !== undefined) throw new Error(`leader election: ${problem} (--leader-lease-duration ${timings.leaseDurationSeconds}, --leader-renew-deadline ${timings.renewDeadlineMs / 1000}, --leader-retry-period ${timings.retryPeriodMs / 1000})`);
  return { namespace, timings };
}

/** The node-loss handler's settings, or undefined when it does not run (no API access, or off). */
function nodeLossOptions(values: NodeLossValues, env: NodeJS.ProcessEnv, hasApi: boolean): NodeLossOptions | undefined {
  const given = values['node-loss'] ?? (env.LODE_NODE_LOSS || undefined);
  if (given !== undefined && !(NODE_LOSS_MODES as readonly string[]).includes(given)) throw new Error(`--node-loss "${given}" must be one of ${NODE_LOSS_MODES.join(', ')}`);
  const mode = (given ?? (hasApi ? 'on' : 'off')) as NodeLossMode;
  if (mode !== 'off' && !hasApi) throw new Error(`--node-loss ${mode} needs --in-cluster or --kubeconfig`);
  const { namespace, timings } = leaderOptions(values, env);
  const period = values['node-loss-period'] ?? (env.LODE_NODE_LOSS_PERIOD || undefined);
  const periodMs = period !== undefined ? decimalSeconds('node-loss-period', period) : DEFAULT_NODE_LOSS_PERIOD_MS;
  if (mode === 'off') return undefined;
  return { mode, namespace, timings, periodMs };
}

/** Template capacity: on by default where pool profiles exist (--pool-config with profile entries, and API access), which it publishes. */
function templateCapacityOptions(values: LeaderValues, env: NodeJS.ProcessEnv, profiles: boolean, hasProfiles: boolean): TemplateCapacityOptions | undefined {
  const given = values['template-capacity'] ?? (env.LODE_TEMPLATE_CAPACITY || undefined);
  if (given !== undefined && given !== 'on' && given !== 'off') throw new Error(`--template-capacity "${given}" must be on or off`);
  const period = values['template-capacity-period'] ?? (env.LODE_TEMPLATE_CAPACITY_PERIOD || undefined);
  const periodMs = period !== undefined ? decimalSeconds('template-capacity-period', period) : DEFAULT_TEMPLATE_CAPACITY_PERIOD_MS;
  if (given === 'on' && !profiles) throw new Error('--template-capacity on needs --pool-config and API access (--in-cluster or --kubeconfig): it publishes the pool profiles');
  if ((given ?? (hasProfiles ? 'on' : 'off')) === 'off') return undefined;
  return { ...leaderOptions(values, env), periodMs };
}

/** A whole number of seconds from `min` to `max`, or the operator's error. */
function wholeSeconds(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new Error(`--${flag} "${text}" must be a whole number of seconds from ${min} to ${max}`);
  return Number(text);
}

/** The orphan check: on by default with API access, off without (it has no PVs to compare with). */
function orphanOptions(values: { 'orphan-check'?: string; 'orphan-grace'?: string; 'delete-orphans'?: boolean }, env: NodeJS.ProcessEnv, api: boolean): OrphanOptions | undefined {
  const check = values['orphan-check'] ?? (env.LODE_ORPHAN_CHECK || undefined);
  const grace = values['orphan-grace'] ?? (env.LODE_ORPHAN_GRACE || undefined);
  const remove = values['delete-orphans'] ?? env.LODE_DELETE_ORPHANS === 'true';
  const givenS = check === undefined ? undefined : wholeSeconds('orphan-check', check, 0, 86_400);
  if (!api) {
    // A check turned off (0) is what a driver without API access has anyway: not a contradiction.
    const given = [givenS !== undefined && givenS !== 0 && '--orphan-check', grace !== undefined && '--orphan-grace', remove && '--delete-orphans'].filter((f) => f !== false);
    if (given.length > 0) throw new Error(`${given.join(', ')} need${given.length === 1 ? 's' : ''} --in-cluster or --kubeconfig: orphans are found by comparing with the PersistentVolumes`);
    return undefined;
  }
  const checkS = givenS ?? DEFAULT_ORPHAN_CHECK_S;
  const graceS = grace === undefined ? DEFAULT_ORPHAN_GRACE_S : wholeSeconds('orphan-grace', grace, 1, 30 * 86_400);
  if (checkS === 0) {
    if (remove) throw new Error('--delete-orphans needs the orphan check: --orphan-check 0 turns it off');
    return undefined;
  }
  return { checkMs: checkS * 1000, graceMs: graceS * 1000, delete: remove };
}
