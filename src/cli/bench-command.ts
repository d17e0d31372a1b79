// `lode bench` and `lode demo`: run cluster-bench scenarios against real driver processes and report what happened.
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadScenario, type Step } from '../bench/scenario/scenario-file.js';
import { runScenario } from '../bench/scenario/scenario-runner.js';
import { ManifestError, UnmodelledFields } from '../bench/manifests/load-manifests.js';
import { EVENT_HEADER, eventLine, foldedEventLines } from '../bench/report/event-lines.js';
import { renderMetrics, renderSummary, renderTables } from '../bench/report/tables.js';
import { renderApiRequests } from '../bench/report/api-requests.js';
import { Progress } from '../bench/report/progress.js';
import type { RunFailure, RunResult } from '../bench/scenario/run-result.js';
import { ApiServer, NotLoopbackError, parseApiAddress } from '../bench/apiserver/server.js';
import { writeKubeconfig } from '../bench/apiserver/kubeconfig.js';

/** Built-in scenarios live in the repository's scenarios/ directory. */
export const SCENARIOS_DIR = fileURLToPath(new URL('../../../scenarios/', import.meta.url));
export const DEMO_SCENARIO = 'demo';
const DEFAULT_WORK_ROOT = '/var/lib/lode/bench';

const USAGE = `usage: lode bench [SCENARIO ...] [flags]
       lode demo [flags]

SCENARIO is a scenario file, or the name of a built-in one under scenarios/ (e.g. 03-stale-capacity,
01-capacity-tracking/scenario-on.yaml; see --list).

  --seed N          override the scenario's seed (same scenario + seed = same events)
  --provisioning M  distributed (external-provisioner on every node, the default) or central (one for
                    the cluster), overriding the scenario
  --driver-api B    on or off: whether every driver gets a kubeconfig for the run's own API, overriding
                    the scenario's driverApi. On by default, as the DaemonSet runs it: its API features
                    (e.g. pod reservations) work, with the DaemonSet's settings (node-loss handling off)
  --upstream        the same as --driver-api off: drivers without API access, for upstream behaviour
  --sidecars S     reenacted (the bench's own csi-provisioner, csi-snapshotter, snapshot-controller and
                    registrar, the default) or real (the kubernetes-csi binaries from ../shared/tools/csi, or
                    LODE_CSI_TOOLS, per node with the DaemonSet's flags; the run is paced), overriding the scenario
  --work-dir DIR    where node pools, sockets and kubelet dirs go (default ${DEFAULT_WORK_ROOT}); a fresh
                    run-* directory is made inside it and removed at the end
  --json FILE       write the results as JSON to FILE ("-" = stdout, and no other output)
  --events MODE     live | folded | none: the event log while running (live, default) or at the end
  --keep-work-dir   keep the run directory (mounts and loop devices are still removed)
  --hold            after the last step keep the cluster running, its clock following wall-clock time,
                    until Ctrl-C (which then reports and cleans up as usual)
  --api HOST:PORT   serve the run's objects as the Kubernetes API over HTTP on a loopback address
                    (port 0 = any free one) and write a kubeconfig for it (path printed at start)
  --kubeconfig FILE where --api writes its kubeconfig (default <work-dir>/kubeconfig-<pid>, removed at
                    the end; a FILE named here is kept)
  --list            list the built-in scenarios
`;

function rmdirIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch { /* already gone */ }
}

/** Resolves a scenario argument to a file. */
export function scenarioPath(arg: string): string {
  if (existsSync(arg)) return resolve(arg);
  for (const candidate of [join(SCENARIOS_DIR, arg, 'scenario.yaml'), join(SCENARIOS_DIR, `${arg}.yaml`), join(SCENARIOS_DIR, arg)]) {
    if (existsSync(candidate) && candidate.endsWith('.yaml')) return candidate;
  }
  throw new ManifestError(`no scenario "${arg}" (not a file, nor a built-in under ${SCENARIOS_DIR}; try --list)`);
}

function describeStep(step: Step): string {
  switch (step.op) {
    case 'apply': return `apply ${step.label}`;
    case 'delete': return `delete ${step.kind} ${step.name}`;
    case 'patch': return `patch ${step.kind} ${step.name}`;
    case 'forceDeletePv': return `force-delete the PV of claim ${step.claim}`;
    case 'scale': return `scale statefulset ${step.statefulSet} to ${step.replicas}`;
    case 'wait': return `wait for ${step.label}`;
    case 'advance': return `advance ${step.ms / 1000}s`;
    case 'killDriver': return `kill driver on ${step.node}`;
    case 'restartDriver': return `restart driver on ${step.node}`;
    case 'shutdownNode': return `shut down ${step.node}`;
    case 'taint': return `taint node ${step.node} ${step.taint.key}${step.taint.value !== undefined ? `=${step.taint.value}` : ''}:${step.taint.effect}`;
    case 'mark': return step.text;
  }
}

export async function runBenchCommand(argv: string[]): Promise<number> {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        demo: { type: 'boolean' }, seed: { type: 'string' }, provisioning: { type: 'string' }, 'driver-api': { type: 'string' }, upstream: { type: 'boolean' }, sidecars: { type: 'string' }, 'work-dir': { type: 'string' }, json: { type: 'string' },
        events: { type: 'string' }, 'keep-work-dir': { type: 'boolean' }, hold: { type: 'boolean' }, api: { type: 'string' }, kubeconfig: { type: 'string' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    }));
  } catch (err) {
    process.stderr.write(`lode bench: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.list) {
    for (const d of readdirSync(SCENARIOS_DIR, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'common').map((e) => e.name).sort()) {
      for (const f of readdirSync(join(SCENARIOS_DIR, d)).filter((x) => x.endsWith('.yaml') && x.startsWith('scenario')).sort()) {
        const s = loadScenario(join(SCENARIOS_DIR, d, f));
        process.stdout.write(`${join(d, f).padEnd(46)} ${(s.description.split('. ')[0] ?? '').slice(0, 100)}\n`);
      }
    }
    return 0;
  }
  const names = values.demo ? [DEMO_SCENARIO, ...positionals] : positionals;
  if (names.length === 0) {
    process.stderr.write(`lode bench: name a scenario (or use --list)\n\n${USAGE}`);
    return 2;
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    process.stderr.write('lode bench needs root: each simulated node runs a real lode driver that attaches loop devices and mounts filesystems (run it with sudo)\n');
    return 1;
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !Number.isInteger(seed)) {
    process.stderr.write(`lode bench: --seed must be an integer\n`);
    return 2;
  }
  const provisioning = values.provisioning;
  if (provisioning !== undefined && provisioning !== 'distributed' && provisioning !== 'central') {
    process.stderr.write(`lode bench: --provisioning must be distributed or central\n`);
    return 2;
  }
  const driverApiFlag = values['driver-api'];
  if (driverApiFlag !== undefined && driverApiFlag !== 'on' && driverApiFlag !== 'off') {
    process.stderr.write(`lode bench: --driver-api must be on or off\n`);
    return 2;
  }
  if (values.upstream && driverApiFlag === 'on') {
    process.stderr.write(`lode bench: --upstream runs the drivers without API access; it cannot go with --driver-api on\n`);
    return 2;
  }
  const driverApi = values.upstream ? false : driverApiFlag === undefined ? undefined : driverApiFlag === 'on';
  const sidecars = values.sidecars;
  if (sidecars !== undefined && sidecars !== 'real' && sidecars !== 'reenacted') {
    process.stderr.write(`lode bench: --sidecars must be real or reenacted\n`);
    return 2;
  }
  const jsonToStdout = values.json === '-';
  const eventsMode = values.events ?? 'live';
  if (!['live', 'folded', 'none'].includes(eventsMode)) {
    process.stderr.write(`lode bench: --events must be live, folded or none\n`);
    return 2;
  }
  let apiAddress: { host: string; port: number } | undefined;
  if (values.api !== undefined) {
    try {
      apiAddress = parseApiAddress(values.api);
    } catch (err) {
      if (!(err instanceof NotLoopbackError)) throw err;
      process.stderr.write(`lode bench: ${err.message}\n`);
      return 2;
    }
  } else if (values.kubeconfig !== undefined) {
    process.stderr.write(`lode bench: --kubeconfig is where --api writes its kubeconfig; name --api too\n`);
    return 2;
  }
  const out = process.stdout;
  const say = (s: string): void => { if (!jsonToStdout) out.write(s + '\n'); };
  const workRoot = resolve(values['work-dir'] ?? DEFAULT_WORK_ROOT);
  const createdWorkRoot = !existsSync(workRoot);
  // The API listens before the first run: a port already taken fails before any driver starts.
  let api: { server: ApiServer; kubeconfig: string; keep: boolean } | undefined;
  if (apiAddress !== undefined) {
    const server = new ApiServer(apiAddress);
    let url: string;
    try {
      url = await server.start();
    } catch (err) {
      process.stderr.write(`lode bench: --api ${values.api}: cannot listen: ${(err as Error).message}\n`);
      return 1;
    }
    mkdirSync(workRoot, { recursive: true });
    const kubeconfig = resolve(values.kubeconfig ?? join(workRoot, `kubeconfig-${process.pid}`));
    writeKubeconfig(kubeconfig, url);
    api = { server, kubeconfig, keep: values.kubeconfig !== undefined };
    // On stderr when stdout carries the JSON, so a script can still find it.
    (jsonToStdout ? process.stderr : out).write(`lode bench: API at ${url}; kubeconfig ${kubeconfig} (export KUBECONFIG=${kubeconfig})\n`);
  }
  const abort = new AbortController();
  let interrupts = 0;
  let emergency: (() => Promise<void>) | undefined;
  // While a run is held, Ctrl-C ends the hold: the run then reports and tears down as it would have.
  let holding: AbortController | undefined;
  const onSigint = (): void => {
    if (holding !== undefined && !holding.signal.aborted) {
      process.stderr.write('\nlode bench: hold ended, reporting and cleaning up (Ctrl-C again to interrupt)\n');
      holding.abort();
      return;
    }
    interrupts++;
    if (interrupts === 1) {
      process.stderr.write('\nlode bench: interrupted, cleaning up (Ctrl-C again to force)\n');
      abort.abort();
    } else {
      void (emergency?.() ?? Promise.resolve()).finally(() => process.exit(130));
    }
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const results: (RunResult | RunFailure)[] = [];
  let exitCode = 0;
  try {
    for (const name of names) {
      const unmodelled = new UnmodelledFields();
      const scenario = loadScenario(scenarioPath(name), unmodelled, { ...(seed !== undefined ? { seed } : {}), ...(provisioning !== undefined ? { provisioning } : {}), ...(driverApi !== undefined ? { driverApi } : {}), ...(sidecars !== undefined ? { sidecars } : {}) });
      mkdirSync(workRoot, { recursive: true });
      const workDir = join(workRoot, `run-${process.pid}-${results.length}`);
      const progress = new Progress(process.stderr, process.stderr.isTTY === true && !jsonToStdout);
      say(`\n=== ${scenario.name} (seed ${seed ?? scenario.seed}, ${scenario.provisioning} provisioning${scenario.driverApi ? ', drivers with API access' : ', drivers without API access (upstream)'}${scenario.sidecars === 'real' ? ', real kubernetes-csi sidecars, paced' : ''}) ===`);
      if (scenario.description) say(scenario.description);
      if (eventsMode === 'live') say(`\n${EVENT_HEADER}`);
      holding = values.hold === true ? new AbortController() : undefined;
      const result = await runScenario(scenario, {
        workDir, seed, signal: abort.signal, keepWorkDir: values['keep-work-dir'] ?? false, unmodelled,
        ...(holding !== undefined ? { hold: holding.signal } : {}),
        onHold: () => { progress.setStep('holding (Ctrl-C to end)'); process.stderr.write('lode bench: last step done; holding the cluster, its clock following wall time (Ctrl-C to end)\n'); },
        onCluster: (cluster) => {
          api?.server.attach(cluster);
          // A forced exit skips the finally below: the kubeconfig it wrote goes with the drivers.
          emergency = () => cluster.emergencyStop().finally(() => { if (api !== undefined && !api.keep) rmSync(api.kubeconfig, { force: true }); });
          progress.attach(cluster);
          if (eventsMode === 'live' && !jsonToStdout) cluster.events.onEvent((e) => { progress.clear(); out.write(eventLine(e) + '\n'); });
        },
        onStep: (_i, step) => { if (!jsonToStdout) progress.setStep(describeStep(step)); },
      }).finally(() => progress.stop());
      results.push(result);
      if (eventsMode === 'folded') say(`\n${EVENT_HEADER}\n${foldedEventLines(result.events).join('\n')}`);
      say(`\n${renderTables(result)}\n\n${renderMetrics(result)}\n\n${renderApiRequests(result)}\n\nSummary\n${renderSummary(result)}`);
      const timedOut = result.waits.filter((w) => w.outcome !== 'condition');
      for (const w of timedOut) say(`note: step ${w.step + 1} (wait for ${w.label}) ended by ${w.outcome}, not by its condition`);
      if (result.teardownProblems.some((p) => !p.startsWith('left behind'))) exitCode = 1;
    }
  } catch (err) {
    process.stderr.write(`lode bench: ${err instanceof Error ? err.message : String(err)}\n`);
    exitCode = abort.signal.aborted ? 130 : 1;
    // --json gets the refusal too: a script reading it must not mistake a refused run for a missing one.
    results.push({
      scenario: names[results.length] ?? '',
      failed: err instanceof ManifestError ? 'manifests' : 'run',
      errors: err instanceof ManifestError ? err.problems : [err instanceof Error ? err.message : String(err)],
    });
  } finally {
    if (api !== undefined) {
      await api.server.close();
      if (!api.keep) rmSync(api.kubeconfig, { force: true });
    }
    // Leave no empty directory behind that this run made.
    if (createdWorkRoot) rmdirIfEmpty(workRoot);
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
  if (values.json !== undefined) {
    const text = JSON.stringify(results.length === 1 ? results[0] : results, null, 2) + '\n';
    if (jsonToStdout) out.write(text);
    else writeFileSync(values.json, text);
  }
  return exitCode;
}
