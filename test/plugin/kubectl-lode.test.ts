// kubectl lode through the real kubectl against held bench runs with drivers that have API access: status (with the drivers' metrics through the pod proxy, and a driver that does not answer), volumes, orphans, why (both Pending cases), kubectl's flags and exit codes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { needsRoot } from '../bench/run-helpers.js';
import { holdRun } from '../helpers/held-run.js';
import { KUBECTL_BINARIES } from '../bench/apiserver/kubectl-runner.js';
import { packageVersion } from '../../src/util/version.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PLUGIN = join(REPO, 'dist/src/plugin/main.js');
const LAUNCHER = join(REPO, 'deploy/kubectl-lode');
const SCENARIO = join(REPO, 'test/plugin/fixtures/scenario.yaml');
/** The machine's kubectl: plugins need 1.12 or later, which Debian's 1.20 also is, but one kubectl is enough here. */
const KUBECTL = KUBECTL_BINARIES[0];
/** What lode_build_info says: package.json's version. */
const VERSION = packageVersion();

interface Ran { code: number | null; stdout: string; stderr: string }

/** Runs a command to its end with its output collected; a bound turns a hang into a failure, and is never asserted. */
function ran(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const p = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const bound = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('close', (code) => { clearTimeout(bound); resolve({ code, stdout, stderr }); });
  });
}

describe('kubectl lode against a held bench run', { skip: needsRoot ?? (KUBECTL === undefined ? 'kubectl is not installed' : undefined) }, () => {
  let root = '';
  let home = '';
  let bin = '';
  let kubeconfig = '';
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let env: NodeJS.ProcessEnv = {};

  /** Runs a command (kubectl unless given) with the test's PATH and HOME; the 60 s bound turns a hang into a failure, it is never asserted. */
  const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}, file = KUBECTL!): Promise<Ran> => ran(file, args, { ...env, ...extraEnv });
  const lode = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> => {
    const r = await run(['lode', ...args], extraEnv);
    assert.equal(r.code, 0, `kubectl lode ${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '', 'nothing on stderr when all went well');
    return r.stdout;
  };
  const json = async <T>(args: string[]): Promise<T> => JSON.parse(await lode([...args, '-o', 'json'])) as T;
  /** Table rows split on kubectl's column gaps, header first. */
  const rows = (text: string): string[][] => text.trimEnd().split('\n').map((l) => l.split(/ {3,}/));

  before(async () => {
    root = mkdtempSync('/tmp/lode-kubectl-plugin-');
    home = mkdtempSync('/tmp/lode-kubectl-plugin-home-');
    bin = join(home, 'bin');
    mkdirSync(bin);
    // The single file a user copies: it finds the package through LODE_HOME.
    copyFileSync(LAUNCHER, join(bin, 'kubectl-lode'));
    const held = await holdRun(SCENARIO, root);
    child = held.child;
    exited = held.exited;
    kubeconfig = held.kubeconfig;
    env = { ...process.env, HOME: home, KUBECONFIG: kubeconfig, LODE_HOME: REPO, PATH: `${bin}:${process.env['PATH'] ?? ''}`, NO_COLOR: '' };
  });

  after(async () => {
    if (child.exitCode === null) child.kill('SIGINT');
    assert.equal(await exited, 0);
    rmSync(home, { recursive: true, force: true });
    if (existsSync(root) && readdirSync(root).length === 0) rmdirSync(root);
  });

  it('kubectl finds the plugin on PATH, and kubectl lode --help answers', async () => {
    const list = await run(['plugin', 'list']);
    assert.match(list.stdout, new RegExp(`${bin}/kubectl-lode`));
    assert.match(await lode(['--help']), /kubectl lode why CLAIM\|POD/);
  });

  it('status: per node its pool, backend, size, allocated and free space, quarantined volumes, the driver\'s health and version; the orphan warning on node-1, the class whose pool no node has, the node-loss leader', async () => {
    const out = await lode(['status']);
    const table = rows(out.split('\n\n')[0] ?? '');
    assert.deepEqual(table[0], ['NODE', 'STATE', 'DRIVER', 'HEALTH', 'VERSION', 'POOL', 'BACKEND', 'SIZE', 'ALLOCATED', 'FREE', 'VOLUMES', 'LARGEST', 'QUARANTINED', 'WARNINGS']);
    // Each pool is "local=160Mi" on a loop backend (cluster.yaml). node-1 holds kept-data's 32Mi volume
    // (its PV) and the orphan's 24Mi, which no PV counts but its driver does: 56Mi allocated, 160 - 56 = 104Mi free.
    const byNode = new Map(table.slice(1).map((r) => [r[0], r]));
    assert.deepEqual(byNode.get('node-1')?.slice(3), ['Ready', VERSION, 'local', 'loop', '160Mi', '56Mi', '104Mi', '1', '104Mi', '0', '1']);
    assert.deepEqual(byNode.get('node-2')?.slice(3), ['Ready', VERSION, 'local', 'loop', '160Mi', '0B', '160Mi', '0', '160Mi', '0', '0']);
    assert.deepEqual(table.slice(1).map((r) => r[1]), ['Ready', 'Ready']);
    assert.match(out, /Classes no node has space for: lode-nowhere \(pool "nowhere"\)/);
    assert.match(out, /Node-loss handler: node-\d/);
    assert.match(out, /node-1 +OrphanedVolume +volume lv-\S+ \(pvc-\S+\) in pool local, 24Mi/);
    assert.doesNotMatch(out, /Note:/, 'every driver answered: nothing unknown');
    assert.doesNotMatch(out, /\u001b\[/, 'no colour into a pipe');
    const report = await json<{ kind: string; driverNote: string | null; pools: Array<{ node: string; pool: string; freeBytes: number; allocatedBytes: number; maximumBytes: Record<string, number | null>; driverHealth: string; driverVersion: string | null; driver: Record<string, unknown> | null }> }>(['status']);
    assert.equal(report.kind, 'LodeStatus');
    assert.equal(report.driverNote, null);
    const n1 = report.pools.find((p) => p.node === 'node-1');
    assert.deepEqual([n1?.driverHealth, n1?.driverVersion, n1?.allocatedBytes], ['Ready', VERSION, 32 * 2 ** 20]);
    assert.deepEqual(n1?.driver, { backend: 'loop', sizeBytes: 160 * 2 ** 20, allocatedBytes: 56 * 2 ** 20, availableBytes: 104 * 2 ** 20, thinDataUsed: null, thinMetadataUsed: null, quarantinedVolumes: 0 });
    const n2 = report.pools.find((p) => p.node === 'node-2');
    assert.equal(n2?.freeBytes, 160 * 2 ** 20);
    // The xfs class can make nothing in a 160Mi pool: xfs takes at least 300Mi.
    assert.deepEqual(n2?.maximumBytes, { 'lode-local': 160 * 2 ** 20, 'lode-local-xfs': 0 });
    const wide = await lode(['status', '-o', 'wide']);
    assert.match(wide, /lode-local\(largest 104Mi\),lode-local-xfs\(largest 0B\)/);
    // IN-PVS: what the PVs add up to; THIN-DATA and THIN-META: "-" for a pool that is not thin.
    assert.deepEqual(rows(wide.split('\n\n')[0] ?? '')[1]?.slice(14, 17), ['32Mi', '-', '-']);
  });

  it('kubectl get --raw through the pod proxy: the driver pod\'s metrics port answers with the driver\'s own metrics text', async () => {
    const pods = JSON.parse((await run(['get', 'pods', '-n', 'lode-system', '-l', 'app.kubernetes.io/name=lode', '-o', 'json'])).stdout) as { items: Array<{ metadata: { name: string }; spec: { nodeName: string; containers: Array<{ ports?: Array<{ name?: string; containerPort: number }> }> } }> };
    assert.deepEqual(pods.items.map((p) => [p.metadata.name, p.spec.nodeName]), [['lode-node-node-1', 'node-1'], ['lode-node-node-2', 'node-2']]);
    const port = pods.items[1]?.spec.containers[0]?.ports?.find((p) => p.name === 'metrics')?.containerPort;
    assert.equal(port, 9809, 'the port deploy/components/monitoring names metrics');
    const r = await run(['get', '--raw', `/api/v1/namespaces/lode-system/pods/lode-node-node-2:${port}/proxy/metrics`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# HELP /);
    assert.match(r.stdout, new RegExp(`\nlode_build_info\\{version="${VERSION.replaceAll('.', '\\.')}",driver_name="lode.csi.dev",node_id="node-2"\\} 1\n`));
    assert.match(r.stdout, /\nlode_pool_capacity_bytes\{pool="local",backend="loop",driver_name="lode.csi.dev",node_id="node-2"\} 167772160\n/);
    // Any other port has nothing behind it, as a pod IP's closed port: upstream's 503.
    const closed = await run(['get', '--raw', '/api/v1/namespaces/lode-system/pods/lode-node-node-2:9808/proxy/metrics']);
    assert.equal(closed.code, 1);
    assert.match(closed.stderr, /ServiceUnavailable.*error trying to reach service/);
  });

  it('volumes: the one PV left, with its node, pool, size, claim and pod; -o yaml carries the same', async () => {
    const table = rows(await lode(['volumes']));
    assert.deepEqual(table[0], ['NAME', 'NODE', 'POOL', 'SIZE', 'STATUS', 'CLAIM', 'POD', 'SNAPSHOTS']);
    assert.equal(table.length, 2, 'lost-data\'s PV was force-deleted: one PV of the driver is left');
    assert.deepEqual(table[1]?.slice(1), ['node-1', 'local', '32Mi', 'Bound', 'default/kept-data', 'kept', '0']);
    const yaml = await lode(['volumes', '-o', 'yaml']);
    assert.match(yaml, /kind: LodeVolumeList/);
    assert.match(yaml, /claim: default\/kept-data/);
  });

  it('orphans: the volume whose PV was force-deleted, on node-1, with its size and the name of its old PV', async () => {
    const lostPv = (await run(['get', 'pvc', 'lost-data', '-o', 'jsonpath={.spec.volumeName}'])).stdout;
    assert.match(lostPv, /^pvc-/);
    const list = await json<{ items: Array<{ node: string; id: string; name: string; pool: string; sizeBytes: number; inUse: string | null; deleteOrphans: boolean }> }>(['orphans']);
    assert.deepEqual(list.items.map((o) => [o.node, o.name, o.pool, o.sizeBytes, o.deleteOrphans]), [['node-1', lostPv, 'local', 24 * 2 ** 20, false]]);
    const table = rows(await lode(['orphans']));
    assert.deepEqual(table[0], ['NODE', 'VOLUME', 'POOL', 'SIZE', 'AGE', 'IN USE']);
    assert.deepEqual([table[1]?.[0], table[1]?.[1], table[1]?.[5]], ['node-1', list.items[0]?.id, 'unknown']);
  });

  it('why, a claim whose class names a pool no node has: the scheduler says "not enough free storage", the plugin says which pool is missing on each node', async () => {
    const out = await lode(['why', 'nowhere-data']);
    assert.match(out, /^pvc\/default\/nowhere-data: Pending\n/);
    assert.match(out, /scheduler: 0\/2 nodes are available: 2 node\(s\) did not have enough free storage/);
    // The driver's leader said it on the claim, and kubectl describe shows the same Event.
    assert.match(out, /\n  driver: claim nowhere-data: PoolNotOnAnyNode: no node has pool "nowhere", which class lode-nowhere names: the lode\.csi\.dev drivers of 2 node\(s\) \(node-1, node-2\) report no space for it/);
    assert.equal(out.match(/driver: /g)?.length, 1, 'one line: one Event on the claim');
    const describe = await run(['describe', 'pvc', 'nowhere-data']);
    assert.match(describe.stdout, /Warning +PoolNotOnAnyNode +\S+ +lode\.csi\.dev\/claim-reasons +no node has pool "nowhere"/);
    const table = rows(out.split('\n\n')[1] ?? '');
    assert.deepEqual(table.slice(1), ['node-1', 'node-2'].map((n) => [n, 'no', 'no pool "nowhere" on this node (class lode-nowhere; the driver reports no space for it)']));
    // Asked through its pod, the same answer.
    const byPod = await json<{ target: string; nodes: Array<{ node: string; fits: boolean; reason: string }> }>(['why', 'pod/nowhere']);
    assert.equal(byPod.target, 'pod/default/nowhere');
    assert.deepEqual(byPod.nodes.map((v) => v.reason.startsWith('no pool "nowhere"')), [true, true]);
  });

  it('why, an xfs claim smaller than xfs\'s minimum in pools with less than that free: below the filesystem\'s minimum, on each node', async () => {
    const report = await json<{ target: string; phase: string; driver: string[]; nodes: Array<{ node: string; fits: boolean; reason: string }> }>(['why', 'pod/xfs-app']);
    assert.equal(report.phase, 'Pending');
    assert.deepEqual(report.nodes.map((v) => [v.node, v.fits]), [['node-1', false], ['node-2', false]]);
    for (const v of report.nodes) assert.match(v.reason, /^below the filesystem's minimum: xfs volumes take at least 300Mi \(claim small-xfs asks 64Mi\), pool "local" has \d+Mi free$/);
    assert.deepEqual(report.driver.map((d) => d.split(': ').slice(0, 2).join(': ')), ['claim small-xfs: BelowFilesystemMinimum']);
    const text = await lode(['why', 'pvc/small-xfs']);
    assert.match(text, /node-2 +no +below the filesystem's minimum/);
    assert.match(text, /\n  driver: claim small-xfs: BelowFilesystemMinimum: xfs volumes take at least 300Mi and this claim asks 64Mi/);
  });

  it('why, a running pod: scheduled, and the node its selector rules out', async () => {
    const report = await json<{ phase: string; summary: string[]; nodes: Array<{ node: string; fits: boolean; reason: string }> }>(['why', 'pod/kept']);
    assert.equal(report.phase, 'Running');
    assert.ok(report.summary.some((s) => s.startsWith('pod kept is scheduled on node node-1')));
    assert.deepEqual(report.nodes.map((v) => [v.node, v.fits]), [['node-1', true], ['node-2', false]]);
    assert.equal(report.nodes[1]?.reason, 'does not match pod kept\'s nodeSelector slot=one');
  });

  it('kubectl\'s flags: --kubeconfig without KUBECONFIG, --context, -n; errors on stderr with exit code 1', async () => {
    const viaFlag = await run(['lode', 'volumes', '--kubeconfig', kubeconfig], { KUBECONFIG: '' });
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.match(viaFlag.stdout, /default\/kept-data/);
    const context = (await run(['config', 'current-context'])).stdout.trim();
    assert.equal((await run(['lode', 'volumes', '--context', context])).code, 0);
    const badContext = await run(['lode', 'status', '--context', 'nope']);
    assert.equal(badContext.code, 1);
    assert.match(badContext.stderr, /^error: context was not found for specified context: nope\n$/);
    const otherNs = await run(['lode', 'why', '-n', 'kube-system', 'nowhere-data']);
    assert.equal(otherNs.code, 1);
    assert.match(otherNs.stderr, /NotFound.*"nowhere-data" not found in namespace "kube-system"/);
    const badOutput = await run(['lode', 'volumes', '-o', 'table']);
    assert.equal(badOutput.code, 1);
    assert.match(badOutput.stderr, /allowed formats are: json, wide, yaml/);
    const badCommand = await run(['lode', 'frobnicate']);
    assert.equal(badCommand.code, 1);
    assert.match(badCommand.stderr, /unknown command "frobnicate"/);
    const unreachable = await run(['lode', 'status', '--kubeconfig', join(home, 'missing')]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^error: cannot load the kubeconfig/);
  });

  it('colour on a terminal only: the same status through a pseudo-terminal paints the warning count', { skip: existsSync('/usr/bin/script') ? undefined : 'script(1) is not installed' }, async () => {
    const r = await run(['-qec', 'kubectl lode status', '/dev/null'], {}, '/usr/bin/script');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\u001b\[33m1\u001b\[0m/);
    const plain = await run(['-qec', 'kubectl lode status', '/dev/null'], { NO_COLOR: '1' }, '/usr/bin/script');
    assert.doesNotMatch(plain.stdout, /\u001b\[3/);
  });

  it('installed as npm links a package\'s bin (a link to the compiled entry point), it answers the same', async () => {
    const npmBin = join(home, 'npm-bin');
    mkdirSync(npmBin);
    symlinkSync(PLUGIN, join(npmBin, 'kubectl-lode'));
    const r = await run(['lode', 'volumes'], { PATH: `${npmBin}:${process.env['PATH'] ?? ''}`, LODE_HOME: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /default\/kept-data/);
  });

  it('the one-file launcher: linked from a checkout it finds the checkout; copied with no package to find, it says so with exit code 1', async () => {
    const linkBin = join(home, 'link-bin');
    mkdirSync(linkBin);
    symlinkSync(LAUNCHER, join(linkBin, 'kubectl-lode'));
    const linked = await run(['lode', 'volumes'], { PATH: `${linkBin}:${process.env['PATH'] ?? ''}`, LODE_HOME: '' });
    assert.equal(linked.code, 0, linked.stderr);
    assert.match(linked.stdout, /default\/kept-data/);
    // The copy in `bin` sits in no checkout; with LODE_HOME wrong and no global package, nothing runs.
    const lost = await run(['lode', 'status'], { LODE_HOME: join(home, 'nowhere'), PATH: `${bin}:/usr/bin:/bin` }, KUBECTL!);
    assert.equal(lost.code, 1);
    assert.match(lost.stderr, /kubectl-lode cannot find a built Lode package: set LODE_HOME/);
  });
});

describe('kubectl lode status when a driver does not answer its pod proxy', { skip: needsRoot ?? (KUBECTL === undefined ? 'kubectl is not installed' : undefined) }, () => {
  let root = '';
  let held: Awaited<ReturnType<typeof holdRun>>;
  const lode = (args: string[]): Promise<Ran> => ran(KUBECTL!, ['lode', ...args], { ...process.env, KUBECONFIG: held.kubeconfig, LODE_HOME: REPO, PATH: `${join(REPO, 'deploy')}:${process.env['PATH'] ?? ''}` });

  before(async () => {
    root = mkdtempSync('/tmp/lode-kubectl-plugin-down-');
    held = await holdRun(join(REPO, 'test/plugin/fixtures/driver-down.yaml'), root);
  });

  after(async () => {
    if (held.child.exitCode === null) held.child.kill('SIGINT');
    assert.equal(await held.exited, 0);
    if (existsSync(root) && readdirSync(root).length === 0) rmdirSync(root);
  });

  it('the figures only the driver knows are <unknown>, one note says where and why, the rest is shown, exit code 0', async () => {
    const r = await lode(['status']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const [head, row] = r.stdout.split('\n\n')[0]!.trimEnd().split('\n').map((l) => l.split(/ {3,}/));
    assert.deepEqual(head?.slice(3, 13), ['HEALTH', 'VERSION', 'POOL', 'BACKEND', 'SIZE', 'ALLOCATED', 'FREE', 'VOLUMES', 'LARGEST', 'QUARANTINED']);
    // The pod is Running but not ready in the API (its kubelet saw the driver container killed); its free space comes from the capacity objects.
    assert.deepEqual(row?.slice(0, 13), ['node-1', 'Ready', '<no csinode>', 'NotReady', '<unknown>', 'local', '<unknown>', '<unknown>', '<unknown>', '64Mi', '0', '64Mi', '<unknown>']);
    const notes = r.stdout.match(/^Note: .*$/gm) ?? [];
    assert.equal(notes.length, 1, r.stdout);
    assert.match(notes[0]!, /^Note: backend, size, allocated bytes, thin fill, quarantined volumes and driver version are unknown on node-1: pod lode-node-node-1 did not answer on port 9809: the server answered 503: error trying to reach service: nothing answers on port 9809/);
    const json = await lode(['status', '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { driverNote: string | null; pools: Array<{ node: string; driver: unknown; driverVersion: string | null; freeBytes: number }> };
    assert.match(report.driverNote ?? '', /unknown on node-1: pod lode-node-node-1 did not answer/);
    assert.deepEqual(report.pools.map((p) => [p.node, p.driver, p.driverVersion, p.freeBytes]), [['node-1', null, null, 64 * 2 ** 20]]);
  });
});
