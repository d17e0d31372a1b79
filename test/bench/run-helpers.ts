// Shared by the bench tests: run a built-in scenario with real drivers in a scratch dir and check nothing is left behind.
import { mkdtempSync, existsSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { loadScenario } from '../../src/bench/scenario/scenario-file.js';
import { runScenario, type RunOptions } from '../../src/bench/scenario/scenario-runner.js';
import type { MarkSnapshot, RunResult } from '../../src/bench/scenario/run-result.js';
import type { BenchEvent } from '../../src/bench/api/event-log.js';
import { UnmodelledFields } from '../../src/bench/manifests/load-manifests.js';
import { loopsUnder, mountsUnder } from '../../src/bench/nodes/sweep.js';
import { PERMISSIONS } from '../../src/driver/cluster/api-permissions.js';

export const SCENARIOS = fileURLToPath(new URL('../../../scenarios/', import.meta.url));
export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
export const needsRoot = isRoot ? undefined : 'needs root: real drivers attach loop devices';

/** Runs scenarios/<file> end to end, then asserts the run cleaned up after itself. */
export async function runBuiltIn(file: string, seed?: number, overrides: { driverApi?: boolean; provisioning?: 'distributed' | 'central'; sidecars?: 'real' | 'reenacted' } = {}, onCluster?: RunOptions['onCluster'], onStep?: RunOptions['onStep']): Promise<RunResult> {
  const root = mkdtempSync('/tmp/lode-bench-test-');
  const workDir = join(root, 'run');
  const unmodelled = new UnmodelledFields();
  const scenario = loadScenario(join(SCENARIOS, file), unmodelled, { ...overrides, ...(seed === undefined ? {} : { seed }) });
  const result = await runScenario(scenario, { workDir, unmodelled, ...(seed === undefined ? {} : { seed }), ...(onCluster !== undefined ? { onCluster } : {}), ...(onStep !== undefined ? { onStep } : {}) });
  assert.deepEqual(await mountsUnder(root), [], 'no mount left under the work dir');
  assert.deepEqual(await loopsUnder(root), [], 'no loop device left backed by the work dir');
  assert.equal(existsSync(workDir), false, 'work dir removed');
  assert.deepEqual(result.teardownProblems, [], 'teardown without problems');
  assert.deepEqual(result.controllerErrors, [], 'no controller errors');
  rmdirSync(root); // empty by now (checked above); rmdir, not rm -r, so a leftover would fail loudly
  assertDriverRequestsPermitted(result);
  return result;
}

/**
 * Every request the run's drivers sent to its API (counted as external/lode-driver) is one
 * src/driver/cluster/api-permissions.ts lists, so the roles built from that list (deploy/base/rbac.yaml
 * for the default features, deploy/components/node-loss for node-loss handling, which scenarios
 * turn on with --node-loss on as that component does; kept equal to it by test/deploy) let it through in a cluster.
 */
export function assertDriverRequestsPermitted(result: RunResult): void {
  const permitted = new Set(PERMISSIONS.flatMap((p) => p.verbs.map((v) => `${v} ${p.resource}`)));
  const sent = result.apiRequests.filter((r) => r.client === 'external/lode-driver').map((r) => `${r.verb} ${r.resource}`);
  assert.deepEqual([...new Set(sent)].filter((r) => !permitted.has(r)), [], 'driver requests that the driver\'s roles do not grant');
}

export function podNode(r: RunResult, pod: string): string | undefined {
  return r.pods.find((p) => p.name === `default/${pod}`)?.node;
}

export function podPhase(r: RunResult, pod: string): string | undefined {
  return r.pods.find((p) => p.name === `default/${pod}`)?.phase;
}

/** The snapshot taken at the scenario's `mark: TEXT` step. */
export function markOf(r: RunResult, text: string): MarkSnapshot {
  const m = r.marks.find((x) => x.text === text);
  assert.ok(m, `mark "${text}" recorded`);
  return m;
}

export function eventsOf(r: RunResult, reason: string, name?: string): BenchEvent[] {
  return r.events.filter((e) => e.reason === reason && (name === undefined || e.name === name));
}

/** The deterministic part of an event: everything but the wall clock. */
export function eventKey(e: BenchEvent): string {
  return `${e.timeMs} ${e.type} ${e.reason} ${e.kind}/${e.name} ${e.source}: ${e.message}`;
}
