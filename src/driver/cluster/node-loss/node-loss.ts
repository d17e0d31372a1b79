// Runs the node-loss handler, and the other work done once for the cluster (leader passes), on whichever node's driver holds the Lease, one pass per period, and stops them when leadership ends.
import type { KubeClient } from '../../../kube/kube-client.js';
import { LeaseElector } from '../../../kube/leader-election.js';
import { describeApiError } from '../../../kube/kube-errors.js';
import { log } from '../../../util/log.js';
import { untilSynced } from '../../../kube/watch-timing.js';
import { describePassError, NodeLossHandler, type NodeLossIdentity } from './node-loss-handler.js';
import { NodeLossInformers, type NodeLossView } from './node-loss-informers.js';
import { nodeLossLeaseName, type NodeLossOptions } from './node-loss-options.js';

/**
 * More work for the node that holds the Lease, run after each node-loss pass: work that must be
 * done once for the cluster, not once per node (claim reasons).
 */
export interface LeaderPass {
  name: string;
  /** One look, with the node-loss caches to read (no list of its own for what they hold). */
  pass(stopped: AbortSignal, caches: NodeLossView): Promise<unknown>;
  /** Leadership ends: drop what the term held (its own caches). */
  endTerm?(): Promise<void>;
}

export interface RunningNodeLoss {
  elector: LeaseElector;
  /** Ends the current pass at its next step, then releases the Lease. */
  close(): Promise<void>;
}

/** The least time between two passes woken by changes. */
const MIN_PASS_GAP_MS = 1_000;

/** Waits `ms`, or less when `signal` aborts or `wake` is called (a change in the caches). */
function pause(ms: number, signal: AbortSignal, wakers: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void { clearTimeout(timer); signal.removeEventListener('abort', done); wakers.delete(done); resolve(); }
    signal.addEventListener('abort', done, { once: true });
    wakers.add(done);
  });
}

export function startNodeLoss(kube: KubeClient, id: NodeLossIdentity, options: NodeLossOptions, leaderPasses: readonly LeaderPass[] = []): RunningNodeLoss {
  const closing = new AbortController();
  let work: Promise<void> = Promise.resolve();
  // The caches run on the leader only, one set per term: a follower holds no PV, Node or
  // capacity object and has no watch open, so the API server's cost does not grow with the
  // number of candidates. The handler reads them; passes wake on their changes, and the
  // period only bounds the wait (a pass over unchanged caches sends no request).
  let informers: NodeLossInformers | undefined;
  const view: NodeLossView = {
    get synced(): boolean { return informers?.synced ?? false; },
    pvs: () => informers?.pvs() ?? [],
    capacities: () => informers?.capacities() ?? [],
    nodes: () => informers?.nodes() ?? [],
  };
  const wakers = new Set<() => void>();
  /** A change came since the last pass began. */
  let dirty = false;
  // One handler for the process, not one per term: a leader that misses a renew deadline (a
  // stalled event loop on a loaded node) and takes the lease straight back must not report
  // again what it reported before (a dry run's Events, a lost node's).
  const handler = new NodeLossHandler(kube, id, options.mode === 'dry-run', view);
  const elector = new LeaseElector(kube, {
    namespace: options.namespace,
    name: nodeLossLeaseName(id.driverName),
    identity: id.nodeId,
    timings: options.timings,
    onLeading: (stopped) => {
      const both = AbortSignal.any([stopped, closing.signal]);
      const caches = new NodeLossInformers(kube, id.driverName, options.namespace);
      informers = caches;
      caches.onChange(() => {
        dirty = true;
        for (const w of [...wakers]) w();
      });
      caches.start();
      work = (async () => {
        try {
          await untilSynced(caches.whenSynced(), both);
          while (!both.aborted) {
            dirty = false;
            try {
              await handler.pass(both);
            } catch (err) {
              log('warn', 'node loss: pass failed; the next one starts over', { error: describePassError(err) });
            }
            for (const extra of leaderPasses) {
              if (both.aborted) break;
              try {
                await extra.pass(both, view);
              } catch (err) {
                log('warn', `${extra.name}: pass failed; the next one starts over`, { error: describeApiError(err, `${extra.name} pass`) });
              }
            }
            // A burst of changes (a rollout's PVs) gives one pass a second, not one per event.
            const gap = Math.min(MIN_PASS_GAP_MS, options.periodMs);
            await pause(gap, both, new Set());
            if (!dirty) await pause(options.periodMs - gap, both, wakers);
          }
        } finally {
          if (informers === caches) informers = undefined;
          await caches.stop();
          for (const extra of leaderPasses) await extra.endTerm?.();
        }
      })();
    },
  });
  elector.start();
  log('info', 'node loss: campaigning for the lease', { lease: `${options.namespace}/${nodeLossLeaseName(id.driverName)}`, mode: options.mode, periodMs: options.periodMs });
  return {
    elector,
    close: async () => {
      closing.abort();
      await work;
      await elector.close();
    },
  };
}
