// The shipped image, built with `npm run image` and run as the DaemonSet runs it (privileged, its entrypoint, the rendered manifest's env and mounts), with the real registrar and livenessprobe beside it: csi-sanity, probes, signals, recovery, memory.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { CsiClient } from '../../src/csi/client.js';
import { listLoopDevices } from '../../src/sys/loop.js';
import { readMountTable } from '../../src/sys/mounts.js';
import { run } from '../../src/sys/exec.js';
import { parseBytes } from '../../src/util/quantity.js';
import { kubectlMissing, REPO_ROOT } from '../deploy/render.js';
import { dirBtrfsFixture } from '../conformance/fixtures.js';
import { CAP_SYS_RESOURCE, fileHash, fsCap, hasCapability, MiB, writeRandomFile } from '../driver/support.js';
import { csiToolsDir } from '../helpers/csi-tools.js';
import { onlyConnectTimeouts, runSanity, sanityCounts } from '../sanity/csi-tools.js';
import { containerEnv, containerMounts, containerOf, hostArgs, hostPathOf, namedPort, renderedPod, type Mount, type RenderedPod } from './pod-spec.js';
import { getPluginInfo } from './plugin-registration.js';

const CONTAINERS_CONF = path.join(REPO_ROOT, 'scripts', 'containers.conf');
const NODE_NAME = 'node-image';
/** The loop pool's directory: a name no other test uses, so its loop devices can be told apart from theirs. */
const LOOP_POOL_DIR = '/var/lib/lode/pools/image-test-loop';
const DIR_POOL_DIR = '/var/lib/lode/disks/image-test-btrfs';

/** Why the image cannot be built and run here, or undefined. */
async function missing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (podman as root, loop devices, mounts)';
  for (const [tool, file] of [['podman', '/usr/bin/podman'], ['runc', '/usr/sbin/runc'], ['debootstrap', '/usr/sbin/debootstrap'], ['nsenter', '/usr/bin/nsenter']] as const) {
    if (!(await fs.access(file, constants.X_OK).then(() => true, () => false))) return `${tool} is not installed (apt-get install podman buildah runc debootstrap)`;
  }
  const kubectl = kubectlMissing();
  if (kubectl !== undefined) return kubectl;
  const tools = await csiToolsDir();
  if (typeof tools !== 'string') return tools.missing;
  return undefined;
}

/** podman's stdout (with `both`, its stderr after it: a container's log is on both). */
function podman(args: string[], timeoutMs = 120_000, both = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn('podman', args, { env: { ...process.env, CONTAINERS_CONF }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    p.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve((both ? out + err : out).trim());
      else reject(new Error(`podman ${args.join(' ')}: exit ${code}: ${err.trim() || out.trim()}`));
    });
  });
}

/** Polls `check` until it is true; a bound against a hang, not a speed check. */
async function until(what: string, check: () => Promise<boolean>, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The pod, started: one lode container after another on the same stand-in host, as a DaemonSet restarts its pod. */
class Pod {
  private seq = 0;
  current = '';
  readonly names: string[] = [];
  readonly sidecars: ChildProcess[] = [];
  sidecarLog = '';

  constructor(
    readonly image: string,
    readonly hostRoot: string,
    readonly lode: IContainer,
    readonly env: Record<string, string>,
    readonly mounts: Mount[],
  ) {}

  hostPath(p: string): string {
    const h = hostPathOf(this.mounts, p);
    if (h === undefined) throw new Error(`${p} is in none of the lode container's mounts`);
    return h;
  }

  get socket(): string { return this.hostPath(new URL(this.env['LODE_ENDPOINT']!).pathname); }

  /** Starts a new lode container and waits until the driver's Probe says ready. */
  async start(): Promise<CsiClient> {
    const name = `lode-image-test-${process.pid}-${++this.seq}`;
    const args = ['run', '-d', '--name', name, '--network', 'none'];
    if (this.lode.securityContext?.privileged === true) args.push('--privileged');
    // What kubelet gives every container: the API service's address (nothing answers in this
    // network namespace, so the driver's API features wait, as during an API outage).
    for (const [k, v] of Object.entries({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', ...this.env })) args.push('--env', `${k}=${v}`);
    for (const m of this.mounts) {
      args.push('--mount', `type=bind,src=${m.source},dst=${m.target},${m.readOnly ? 'ro,' : ''}bind-propagation=${m.propagation}`);
    }
    args.push(this.image);
    await podman(args);
    this.current = name;
    this.names.push(name);
    const client = new CsiClient(`unix://${this.socket}`, 120_000);
    await until('the containerized driver to answer Probe ready', async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', name]);
      if (state !== 'running') throw new Error(`container ${state}: ${await this.logs()}`);
      try {
        return (await client.probe({}, { timeoutMs: 1000 })).ready?.value === true;
      } catch {
        return false;
      }
    });
    return client;
  }

  logs(name = this.current): Promise<string> {
    return podman(['logs', name], 60_000, true).catch((err: Error) => err.message);
  }

  /** tini's pid on the host (PID 1 of the container). */
  async initPid(): Promise<number> {
    return Number(await podman(['inspect', '--format', '{{.State.Pid}}', this.current]));
  }

  /** The driver's pid on the host: tini's one child. */
  async driverPid(): Promise<number> {
    const init = await this.initPid();
    const children = (await fs.readFile(`/proc/${init}/task/${init}/children`, 'utf8')).trim().split(/\s+/).filter((x) => x !== '');
    assert.equal(children.length, 1, `tini has children ${children.join(', ')}`);
    const pid = Number(children[0]);
    assert.match(await fs.readFile(`/proc/${pid}/cmdline`, 'utf8'), /dist\/src\/cli\/main\.js\0driver/);
    return pid;
  }

  /** Runs a sidecar binary on the host in the pod's network namespace, as a container of the same pod would be. */
  async sidecar(binary: string, args: string[]): Promise<void> {
    const p = spawn('nsenter', [`--net=/proc/${await this.initPid()}/ns/net`, '--', binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => { this.sidecarLog = (this.sidecarLog + d.toString()).slice(-20_000); };
    p.stdout?.on('data', keep);
    p.stderr?.on('data', keep);
    this.sidecars.push(p);
  }

  /** GET http://127.0.0.1:PORT/healthz in the pod's network namespace (the probe kubelet would make), with the driver's own probe client. */
  async healthz(port: number): Promise<{ ok: boolean; detail: string }> {
    try {
      const r = await run('nsenter', [`--net=/proc/${await this.initPid()}/ns/net`, '--', process.execPath, path.join(REPO_ROOT, 'dist/src/metrics/health-probe.js'), `127.0.0.1:${port}`], { timeoutMs: 20_000 });
      return { ok: true, detail: r.stdout.trim() };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  stopSidecars(): void {
    for (const p of this.sidecars) if (p.exitCode === null) p.kill('SIGTERM');
    this.sidecars.length = 0;
  }
}

/** Mounts under the stand-in host other than the ones the test made itself. */
async function driverMounts(hostRoot: string, own: readonly string[]): Promise<string[]> {
  return (await readMountTable()).map((m) => m.mountPoint).filter((p) => p.startsWith(hostRoot + '/') && !own.includes(p));
}

/** Loop devices on the loop pool's images (the only ones with this pool's directory in their name). */
async function poolLoops(): Promise<string[]> {
  return (await listLoopDevices()).filter((d) => d.backingFile.includes(path.basename(LOOP_POOL_DIR))).map((d) => `${d.device} ${d.backingFile}`);
}

test('the image, built from the Dockerfile and run as the DaemonSet runs it', { timeout: 1_800_000 }, async (t: TestContext) => {
  const why = await missing();
  if (why !== undefined) {
    // CI installs podman, runc and debootstrap (.ci/run) and has the tools: there a gap is a failure.
    if (process.env.CI === 'true') assert.fail(`CI=true: ${why}`);
    t.skip(why);
    return;
  }
  const tools = await csiToolsDir();
  assert.equal(typeof tools, 'string');
  const toolDir = tools as string;

  const pod: RenderedPod = await renderedPod();
  const lode = containerOf(pod, 'lode');
  assert.ok(lode.image, 'the lode container names its image');

  // Built once per run: scripts/image.sh reuses the base image and every unchanged layer.
  const built = await run('bash', [path.join(REPO_ROOT, 'scripts', 'image.sh'), lode.image], { timeoutMs: 1_200_000 });
  t.diagnostic(built.stderr.split('\n').filter((l) => l.startsWith('image:')).join('; '));

  // A stand-in for the node's root: hostPath volumes live under it (never the machine's own
  // /var/lib/kubelet or /var/lib/lode), except /dev, which must be the real one for loop devices.
  // It is a shared mount, as / is on a systemd node, so Bidirectional propagation can work.
  const hostRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-image-host-'));
  const own: string[] = [];
  await run('mount', ['--bind', hostRoot, hostRoot]);
  own.push(hostRoot);
  await run('mount', ['--make-rshared', hostRoot]);
  const content = path.join(os.tmpdir(), `${path.basename(hostRoot)}-volumes`);
  const hostDir = (p: string) => (p === '/dev' ? '/dev' : path.join(hostRoot, p));
  const mounts = containerMounts(pod, lode, hostDir, (v) => path.join(content, v));
  const env = containerEnv(pod, lode, { nodeName: NODE_NAME, podName: 'lode-node-test' });
  const p = new Pod(lode.image, hostRoot, lode, env, mounts);
  let medium: { cleanup(): Promise<void> } | undefined;
  t.after(async () => {
    p.stopSidecars();
    for (const name of p.names) await podman(['rm', '-f', '-t', '0', name]).catch(() => undefined);
    // Whatever a failed run left mounted under the stand-in host, deepest first, then its loop devices.
    for (const m of (await driverMounts(hostRoot, [hostRoot])).sort((a, b) => b.length - a.length)) await run('umount', ['-l', m]).catch(() => undefined);
    for (const d of await listLoopDevices()) if (d.backingFile.includes(path.basename(LOOP_POOL_DIR))) await run('losetup', ['-d', d.device]).catch(() => undefined);
    await medium?.cleanup();
    await run('umount', ['-l', hostRoot]).catch(() => undefined);
    await fs.rm(hostRoot, { recursive: true, force: true });
    await fs.rm(content, { recursive: true, force: true });
  });

  // The pod's volumes: hostPath directories (the kubelet ones exist on a node), the pools ConfigMap
  // with this node's key, and the service-account files kubelet projects.
  for (const v of pod.spec.volumes ?? []) if (v.hostPath !== undefined && v.hostPath.path !== '/dev') await fs.mkdir(hostDir(v.hostPath.path), { recursive: true });
  const poolConfig = pod.spec.volumes?.find((v) => v.configMap !== undefined);
  assert.ok(poolConfig, 'the pod mounts a ConfigMap of pools');
  const pools = [`imgloop=${LOOP_POOL_DIR},size=2Gi`];
  const btrfsMissing = await dirBtrfsFixture.unavailable();
  if (btrfsMissing === undefined) {
    // A disk the administrator mounted under the pool root: here a btrfs image, bound into the stand-in host.
    const m = await dirBtrfsFixture.setup(t);
    medium = m;
    const at = hostDir(DIR_POOL_DIR);
    await fs.mkdir(at, { recursive: true });
    await run('mount', ['--bind', m.pool.dir!, at]);
    own.push(at);
    pools.push(`imgdir=${DIR_POOL_DIR},${m.pool.extra},size=${m.pool.size}`);
  } else if (process.env.CI === 'true') {
    assert.fail(`CI=true: the dir pool cannot be made: ${btrfsMissing}`);
  } else {
    t.diagnostic(`no dir pool: ${btrfsMissing}`);
  }
  await fs.mkdir(path.join(content, poolConfig.name), { recursive: true });
  await fs.writeFile(path.join(content, poolConfig.name, NODE_NAME), pools.join('\n') + '\n');
  for (const v of pod.spec.volumes ?? []) {
    if (v.projected === undefined) continue;
    await fs.mkdir(path.join(content, v.name), { recursive: true });
    await fs.writeFile(path.join(content, v.name, 'token'), 'not-a-real-token\n');
    await fs.copyFile('/etc/ssl/certs/ca-certificates.crt', path.join(content, v.name, 'ca.crt')).catch(() => fs.writeFile(path.join(content, v.name, 'ca.crt'), ''));
    await fs.writeFile(path.join(content, v.name, 'namespace'), pod.namespace);
  }

  await t.test('the image reports its version: `lode --version`, `lode driver --version` (the entrypoint) and its OCI labels agree with package.json', async () => {
    const version = (JSON.parse(await fs.readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; license: string });
    assert.equal(await podman(['run', '--rm', '--network', 'none', p.image, '--version']), `lode ${version.version}`);
    assert.equal(await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'node', p.image, '/app/dist/src/cli/main.js', '--version']), `lode ${version.version}`);
    const labels = JSON.parse(await podman(['image', 'inspect', '--format', '{{json .Labels}}', p.image])) as Record<string, string>;
    assert.equal(labels['org.opencontainers.image.version'], version.version);
    assert.equal(labels['org.opencontainers.image.licenses'], version.license);
    assert.match(labels['org.opencontainers.image.source'] ?? '', /^https:\/\//);
  });

  await t.test('the runtime holds production dependencies only: no compiler, no npm, no development package, no manual pages, no source maps or type declarations', async () => {
    // What package-lock.json marks as needed by development dependencies alone (a development dependency that a
    // production one also needs, like @types/node under the API client, is not marked so and may be there).
    const lock = JSON.parse(await fs.readFile(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lock.packages).filter(([where, p]) => p.dev === true && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(where)).map(([where]) => where);
    assert.ok(devOnly.includes('node_modules/typescript'), 'the lock marks typescript as development-only');
    const script = [
      'for c in npm npx corepack yarn gcc cc make tsc python; do command -v "$c" >/dev/null && echo "command $c"; done',
      `for d in ${devOnly.join(' ')}; do [ -e "/app/$d" ] && echo "development-only package $d"; done`,
      'find /app/node_modules -type f \\( -name "*.map" -o -name "*.d.ts" \\) | head -n 3',
      'find /usr/share/man /usr/share/info -type f 2>/dev/null | head -n 3',
      'true',
    ].join('\n');
    assert.equal(await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', p.image, '-c', script]), '');
  });

  await t.test('the API client\'s tests pass on the Node.js the image ships, with the dependencies package-lock.json pins', async () => {
    // package.json holds undici at 7 under @kubernetes/client-node (which declares ^8) because the other
    // tests run on Node 20 and undici 8 needs 22.19 or later; the image runs Node 24, so the client is run there too.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-image-node-'));
    const box = `lode-image-node-${process.pid}`;
    try {
      await podman(['create', '--name', box, p.image]);
      await podman(['cp', `${box}:/usr/local/bin/node`, path.join(dir, 'node')]);
      const version = (await run(path.join(dir, 'node'), ['--version'])).stdout.trim();
      const files = ['kube/kube-client', 'kube/leader-election', 'kube/limit-reports', 'bench/driver-api'].map((f) => path.join(REPO_ROOT, 'dist', 'test', `${f}.test.js`));
      // Without this runner's NODE_TEST_CONTEXT, which would make the inner runner report to it instead of printing.
      // Through a shell that always exits 0 and prints the runner's status, so a failure shows which tests failed and why.
      const r = await run('sh', ['-c', 'env -u NODE_TEST_CONTEXT "$@"; echo "# runner exit $?"', 'sh', path.join(dir, 'node'), '--test', '--test-concurrency=1', '--test-reporter=tap', ...files], { timeoutMs: 600_000 });
      const passed = Number(/^# pass (\d+)$/m.exec(r.stdout)?.[1]);
      if (!(passed > 0 && /^# fail 0$/m.test(r.stdout) && /^# runner exit 0$/m.test(r.stdout))) {
        const failures = r.stdout.split('\n').flatMap((l, i, all) => (/^\s*not ok /.test(l) ? all.slice(i, i + 25) : [])).join('\n');
        assert.fail(`the API client's tests fail on the image's Node.js ${version}:\n${failures.slice(0, 8000)}\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-1500)}`);
      }
      t.diagnostic(`the API client's tests on the image's Node.js ${version}: ${passed} passed`);
    } finally {
      await podman(['rm', '-f', box]).catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  let client = await p.start();
  t.after(() => client.close());
  let driverPid = await p.driverPid();
  // Resident memory in two parts. Private (RssAnon + RssShmem): the heap, the runtime's own allocations,
  // nothing the kernel can take back short of killing the process. File-backed (RssFile): pages of the
  // node binary and libraries mapped in; about 55 MiB for Node.js 24, shared with page cache, dropped
  // and re-read under memory pressure, and as large as the kernel's fault-around happened to map them,
  // so it differs between machines (a fresh CI machine saw the total at 128 MiB where this one saw 102).
  const rss = async (): Promise<{ total: number; private: number; file: number }> => {
    const status = await fs.readFile(`/proc/${driverPid}/status`, 'utf8');
    const kb = (field: string): number => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
      assert.ok(m, `/proc/${driverPid}/status has no ${field}`);
      return 1024 * Number(m[1]);
    };
    return { total: kb('VmRSS'), private: kb('RssAnon') + kb('RssShmem'), file: kb('RssFile') };
  };
  const idleRss = await rss();

  await t.test('the sidecars: the registrar answers on the registration socket, the livenessprobe serves /healthz from the CSI Probe', async () => {
    const registrar = containerOf(pod, 'node-driver-registrar');
    const regMounts = containerMounts(pod, registrar, hostDir, (v) => path.join(content, v));
    const regDir = hostPathOf(regMounts, '/registration');
    assert.ok(regDir, 'the registrar mounts the registration directory at /registration');
    // The registrar's default registration directory is /registration, where its volume is mounted.
    await p.sidecar(path.join(toolDir, 'csi-node-driver-registrar'), [...hostArgs(registrar, regMounts), `--plugin-registration-path=${regDir}`]);
    const probe = containerOf(pod, 'livenessprobe');
    await p.sidecar(path.join(toolDir, 'livenessprobe'), hostArgs(probe, containerMounts(pod, probe, hostDir, (v) => path.join(content, v))));

    const regSocket = path.join(regDir, `${env['LODE_DRIVER_NAME']}-reg.sock`);
    await until(`the registration socket ${regSocket}`, async () => existsSync(regSocket), 30_000).catch((err: Error) => assert.fail(`${err.message}\n${p.sidecarLog}`));
    const info = await getPluginInfo(regSocket);
    assert.equal(info.type, 'CSIPlugin');
    assert.equal(info.name, env['LODE_DRIVER_NAME']);
    const announced = (registrar.args ?? []).find((a) => a.startsWith('--kubelet-registration-path='))?.split('=')[1];
    assert.equal(info.endpoint, announced);
    // What kubelet will dial is the socket the driver listens on, seen from the host.
    assert.equal(path.join(hostRoot, info.endpoint), p.socket);

    // The lode container's probes, as kubelet makes them: httpGet on their port, which the livenessprobe sidecar serves.
    for (const [kind, probe] of [['startup', lode.startupProbe], ['readiness', lode.readinessProbe], ['liveness', lode.livenessProbe]] as const) {
      const get = probe?.httpGet;
      assert.ok(get, `the lode container's ${kind} probe is an httpGet`);
      const port = typeof get.port === 'number' ? get.port : namedPort(lode, get.port);
      assert.equal(get.path, '/healthz');
      await until(`${kind} probe: /healthz on port ${port} answers 200`, async () => (await p.healthz(port)).ok, 30_000).catch((err: Error) => assert.fail(`${err.message}\n${p.sidecarLog}`));
    }
    // The registrar's own /healthz (its liveness probe) says the registration socket exists.
    const regPort = registrar.livenessProbe?.httpGet?.port;
    assert.ok(regPort !== undefined);
    const rp = typeof regPort === 'number' ? regPort : namedPort(registrar, regPort);
    await until('registrar /healthz 200', async () => (await p.healthz(rp)).ok, 30_000);
  });

  // One run per pool: the loop pool (loop devices, mkfs.ext4 from the image) and the dir pool (btrfs from the image).
  for (const pool of pools.map((spec) => spec.split('=')[0]!)) {
    await t.test(`csi-sanity against the containerized driver, pool ${pool}: 0 failures`, async () => {
      // Paths as the driver sees them; csi-sanity runs on the host, so it makes, checks and removes
      // them through the stand-in host's copy of the kubelet directory.
      const kubeletDir = env['LODE_TARGET_ROOTS']!;
      const scripts = path.join(content, 'sanity');
      await fs.mkdir(scripts, { recursive: true });
      const script = async (name: string, body: string): Promise<string> => {
        const file = path.join(scripts, name);
        await fs.writeFile(file, `#!/bin/bash\nset -e\nh=${JSON.stringify(hostRoot)}"$1"\n${body}\n`, { mode: 0o755 });
        return file;
      };
      const create = await script('create', 'mkdir -p "$h"; echo "$1"');
      const remove = await script('remove', 'rm -rf "$h"');
      const check = await script('check', 'if [ -f "$h" ]; then echo file; elif [ -d "$h" ]; then echo directory; elif [ -e "$h" ]; then echo other; else echo not_found; fi');
      const params = path.join(scripts, `parameters-${pool}.yaml`);
      await fs.writeFile(params, `pool: ${pool}\n`);
      const args = [
        `--csi.endpoint=${p.socket}`,
        `--csi.mountdir=${kubeletDir}/sanity-target`,
        `--csi.stagingdir=${kubeletDir}/sanity-staging`,
        `--csi.createmountpathcmd=${create}`, `--csi.createstagingpathcmd=${create}`,
        `--csi.removemountpathcmd=${remove}`, `--csi.removestagingpathcmd=${remove}`,
        `--csi.checkpathcmd=${check}`,
        `--csi.testvolumeparameters=${params}`,
        `--csi.testvolumesize=${32 * MiB}`,
        `--csi.testvolumeexpandsize=${64 * MiB}`,
      ];
      // As on the host (test/sanity/host-sanity.test.ts): a mounted ext4 grows on the node alone only with
      // CAP_SYS_RESOURCE, which a privileged container has no more of than this machine gives.
      if (pool === 'imgloop' && !(await hasCapability(CAP_SYS_RESOURCE))) {
        args.push('--ginkgo.skip=NodeExpandVolume should work if node-expand is called after node-publish');
        t.diagnostic('skipped: NodeExpandVolume of a published ext4 volume (needs CAP_SYS_RESOURCE)');
      }
      let output = await runSanity(path.join(toolDir, 'csi-sanity'), args);
      let counts = sanityCounts(output);
      assert.ok(counts, `csi-sanity printed no summary:\n${output.slice(-4000)}`);
      if (onlyConnectTimeouts(output, counts)) {
        t.diagnostic(`csi-sanity could not connect in ${counts.failed} spec(s) and nothing else failed; running it once more`);
        output = await runSanity(path.join(toolDir, 'csi-sanity'), args);
        counts = sanityCounts(output);
        assert.ok(counts, `csi-sanity printed no summary:\n${output.slice(-4000)}`);
      }
      t.diagnostic(`csi-sanity in the container, pool ${pool}: ${counts.passed} passed, ${counts.failed} failed, ${counts.pending} pending, ${counts.skipped} skipped`);
      assert.equal(counts.failed, 0, `csi-sanity failures:\n${output.slice(-8000)}\n${await p.logs()}`);
      assert.ok(counts.passed > 0);
    });
  }

  await t.test('the driver runs with the V8 limits of the pod and stays inside its memory request', async () => {
    const image = JSON.parse(await podman(['image', 'inspect', '--format', '{{json .Config.Env}}', p.image])) as string[];
    // The manifest may override the image's NODE_OPTIONS; what the pod runs with is the manifest's if it sets one.
    const nodeOptions = env['NODE_OPTIONS'] ?? image.find((e) => e.startsWith('NODE_OPTIONS='))?.slice('NODE_OPTIONS='.length);
    assert.ok(nodeOptions, 'neither the pod nor the image sets NODE_OPTIONS');
    const oldSpace = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)?.[1]);
    assert.ok(oldSpace > 0, `NODE_OPTIONS "${nodeOptions}" sets no old-space limit`);
    const environ = (await fs.readFile(`/proc/${driverPid}/environ`, 'utf8')).split('\0');
    assert.ok(environ.includes(`NODE_OPTIONS=${nodeOptions}`), 'the driver process has the NODE_OPTIONS of the pod');
    const logs = (await p.logs()).split('\n');
    // The image's build stage made the bundle's code cache with the image's own Node.js and the
    // driver's flags; NODE_OPTIONS must hold the same, or V8 refuses it and every start compiles all.
    const loaded = logs.find((l) => l.includes('"driver code loaded"'));
    assert.ok(loaded, 'the driver logged how its code was loaded');
    assert.equal((JSON.parse(loaded) as { codeCache?: string }).codeCache, 'used', `V8 took the image's code cache: ${loaded}`);
    const started = logs.find((l) => l.includes('"driver started"'));
    assert.ok(started, 'the driver logged its start');
    const heapLimit = Number((JSON.parse(started) as { heapLimitBytes?: number }).heapLimitBytes);
    // heap_size_limit is the old space plus the young generation (a few semi-spaces of 1 MiB).
    assert.ok(heapLimit >= oldSpace * MiB && heapLimit <= (oldSpace + 16) * MiB, `heap limit ${heapLimit / MiB} MiB for --max-old-space-size=${oldSpace}`);
    const request = lode.resources?.requests?.['memory'];
    assert.ok(request !== undefined, 'the lode container requests memory');
    const busyRss = await rss();
    const mib = (r: { total: number; private: number; file: number }): string =>
      `${Math.round(r.total / MiB)} MiB (private ${Math.round(r.private / MiB)}, file-backed ${Math.round(r.file / MiB)})`;
    t.diagnostic(`driver RSS: ${mib(idleRss)} after start, ${mib(busyRss)} after csi-sanity (request ${String(request)}); heap limit ${Math.round(heapLimit / MiB)} MiB`);
    // What must fit the request is what the driver cannot give back: its private memory. The
    // file-backed part is reported, not asserted (see rss above).
    for (const [when, r] of [['after start', idleRss], ['after csi-sanity', busyRss]] as const) {
      assert.ok(r.private <= parseBytes(String(request)), `private RSS ${when} ${Math.round(r.private / MiB)} MiB is above the request ${String(request)}`);
    }
  });

  await t.test('a wedged driver is seen by the livenessprobe sidecar as unhealthy, and healthy again when it runs', async () => {
    const live = lode.livenessProbe!.httpGet!;
    const port = typeof live.port === 'number' ? live.port : namedPort(lode, live.port);
    process.kill(driverPid, 'SIGSTOP');
    try {
      await until('livenessprobe /healthz to fail while the driver is stopped', async () => !(await p.healthz(port)).ok, 60_000);
    } finally {
      process.kill(driverPid, 'SIGCONT');
    }
    await until('livenessprobe /healthz 200 again', async () => (await p.healthz(port)).ok, 60_000);
  });

  await t.test('SIGTERM to the container: the driver exits 0 within the grace period and leaves no mount, loop device or socket', async () => {
    p.stopSidecars();
    client.close();
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    // podman stop: the stop signal (SIGTERM) to PID 1, tini, which passes it to the driver; SIGKILL after the grace period.
    await podman(['stop', '-t', String(grace), p.current], (grace + 60) * 1000);
    const code = Number(await podman(['inspect', '--format', '{{.State.ExitCode}}', p.current]));
    const logs = await p.logs();
    assert.equal(code, 0, `exit code ${code} (137: killed at the end of the grace period):\n${logs.slice(-4000)}`);
    assert.match(logs, /"stopping".*"SIGTERM"/);
    assert.deepEqual(await driverMounts(hostRoot, own), []);
    assert.deepEqual(await poolLoops(), []);
    assert.equal(existsSync(p.socket), false, 'the socket is removed');
  });

  await t.test('SIGKILL, then a new container: published volumes stay mounted with their data, and the new driver recovers them', async () => {
    client = await p.start();
    const volumes: Array<{ pool: string; id: string; target: string; staging: string; hash: string }> = [];
    for (const pool of pools.map((s) => s.split('=')[0]!)) {
      const res = await client.createVolume({ name: `image-${pool}`, capacity_range: { required_bytes: 64 * MiB, limit_bytes: 0 }, volume_capabilities: [fsCap(pool === 'imgdir' ? 'btrfs' : 'ext4')], parameters: { pool } });
      const id = res.volume!.volume_id;
      const kubelet = env['LODE_TARGET_ROOTS']!;
      const staging = `${kubelet}/plugins/kubernetes.io/csi/${env['LODE_DRIVER_NAME']}/${pool}/globalmount`;
      const target = `${kubelet}/pods/pod-${pool}/volumes/kubernetes.io~csi/pv-${pool}/mount`;
      await fs.mkdir(p.hostPath(staging), { recursive: true });
      await fs.mkdir(path.dirname(p.hostPath(target)), { recursive: true });
      const cap = fsCap(pool === 'imgdir' ? 'btrfs' : 'ext4');
      await client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: cap });
      await client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap, readonly: false });
      // Bidirectional propagation: the mount the driver made in its container is on the host.
      const hash = await writeRandomFile(path.join(p.hostPath(target), 'data'), 4 * MiB);
      // Committed, so that usage counts it (btrfs accounts quota groups at a transaction commit).
      await run('sync', ['-f', path.join(p.hostPath(target), 'data')]);
      volumes.push({ pool, id, target, staging, hash });
    }
    client.close();
    await podman(['kill', '--signal', 'KILL', p.current]);
    await until('the killed container to stop', async () => (await podman(['inspect', '--format', '{{.State.Status}}', p.current])) !== 'running', 30_000);
    // A crashed node plugin leaves its mounts: the application pods keep using them.
    for (const v of volumes) assert.equal(await fileHash(path.join(p.hostPath(v.target), 'data')), v.hash);

    client = await p.start();
    driverPid = await p.driverPid();
    const listed = (await client.listVolumes({})).entries.map((e) => e.volume?.volume_id ?? '');
    for (const v of volumes) {
      assert.ok(listed.includes(v.id), `volume ${v.id} of pool ${v.pool} is listed after the restart`);
      const stats = await client.nodeGetVolumeStats({ volume_id: v.id, volume_path: v.target });
      assert.ok(stats.usage.some((u) => u.unit === 'BYTES' && Number(u.used) >= 4 * MiB), `stats of ${v.pool}: ${JSON.stringify(stats.usage)}`);
      await client.nodeUnpublishVolume({ volume_id: v.id, target_path: v.target });
      await client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: v.staging });
      await client.deleteVolume({ volume_id: v.id });
    }
    assert.deepEqual(await driverMounts(hostRoot, own), []);
    assert.deepEqual(await poolLoops(), []);
    client.close();
    await podman(['stop', '-t', String(pod.spec.terminationGracePeriodSeconds ?? 30), p.current], 120_000);
    assert.equal(Number(await podman(['inspect', '--format', '{{.State.ExitCode}}', p.current])), 0);
  });
});
