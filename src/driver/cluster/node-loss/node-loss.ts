// Runs the node-loss handler, and the other work done once for the cluster (leader passes), on whichever node's driver holds the Lease, one pass per period, and stops them when leadership ends.
import type { KubeClient } from '../../../kube/kube-client.js';
import { LeaseElector } from '../../../kube/leader-election.js';
import { describeApiError } from '../../../kube/kube-errors.js';
import { log } from '../../../util/log.js';
import { describePassError, NodeLossHandler, type NodeLossIdentity } from './node-loss-handler.js';
import { nodeLossLeaseName, type NodeLossOptions } from './node-loss-options.js';

/**
 * More work for the node that holds the Lease, run after each node-loss pass: work that must be
 * done once for the cluster, not once per node (claim reasons).
 */
export interface LeaderPass {
  name: string;
  pass(stopped: AbortSignal): Promise<unknown>;
}

export interface RunningNodeLoss {
  elector: LeaseElector;
  /** Ends the current pass at its next step, then releases the Lease. */
  close(): Promise<void>;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void { clearTimeout(timer); signal.removeEventListener('abort', done); resolve(); }
    signal.addEventListener('abort', done, { once: true });
  });
}

export function startNodeLoss(kube: KubeClient, id: NodeLossIdentity, options: NodeLossOptions, leaderPasses: readonly LeaderPass[] = []): RunningNodeLoss {
  const closing = new AbortController();
  let work: Promise<void> = Promise.resolve();
  // One handler for the process, not one per term: a leader that misses a renew deadline (a
  // stalled event loop on a loaded node) and takes the lease straight back must not report
  // again what it reported before (a dry run's Events, a lost node's).
  const handler = new NodeLossHandler(kube, id, options.mode === 'dry-run');
  const elector = new LeaseElector(kube, {
    namespace: options.namespace,
    name: nodeLossLeaseName(id.driverName),
    identity: id.nodeId,
    timings: options.timings,
    onLeading: (stopped) => {
      const both = AbortSignal.any([stopped, closing.signal]);
      work = (async () => {
        while (!both.aborted) {
          try {
            await handler.pass(both);
          } catch (err) {
            log('warn', 'node loss: pass failed; the next one starts over', { error: describePassError(err) });
          }
          for (const extra of leaderPasses) {
            if (both.aborted) break;
            try {
              await extra.pass(both);
            } catch (err) {
              log('warn', `${extra.name}: pass failed; the next one starts over`, { error: describeApiError(err, `${extra.name} pass`) });
            }
          }
          await pause(options.periodMs, both);
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
