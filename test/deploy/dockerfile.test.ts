// Parses the Dockerfile (no Docker engine here) and checks the image it describes, down to running its file layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './render.js';
import { DRIVER_NODE_FLAGS } from '../../src/util/driver-node-flags.js';

const text = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const froms = dockerfile.getFROMs();

/** Instructions of each stage, in order, keyed by stage name. */
function stages(): Array<{ name: string; image: string; instructions: Instruction[] }> {
  const all = dockerfile.getInstructions();
  return froms.map((from, i) => {
    const start = from.getRange().start.line;
    const end = i + 1 < froms.length ? froms[i + 1]!.getRange().start.line : Infinity;
    return {
      name: from.getBuildStage() ?? String(i),
      image: from.getImage() ?? '',
      instructions: all.filter((ins) => ins.getRange().start.line > start && ins.getRange().start.line < end),
    };
  });
}

const finalStage = (): ReturnType<typeof stages>[number] => stages()[stages().length - 1]!;

function argsOf(ins: Instruction): string[] {
  return ins.getArguments().map((a) => a.getValue());
}

test('the Dockerfile parses and is multi-stage, the runtime stage last', () => {
  assert.ok(froms.length >= 2, `only ${froms.length} FROM`);
  assert.equal(finalStage().name, 'runtime');
  const problems = dockerfile.getInstructions().filter((i) => i.getKeyword() !== i.getKeyword().toUpperCase());
  assert.deepEqual(problems, []);
});

test('every base image is pinned to a full version tag (never latest, no build-time variables)', () => {
  for (const from of froms) {
    const image = from.getImage() ?? '';
    assert.ok(!image.includes('$'), `FROM ${image}: a variable hides the version from scanners`);
    const stageNames = new Set(froms.map((f) => f.getBuildStage()));
    if (stageNames.has(image)) continue; // FROM <earlier stage>
    const tag = from.getImageTag();
    assert.ok(tag, `FROM ${image} has no tag`);
    assert.notEqual(tag, 'latest');
    assert.match(tag, /^\d+\.\d+\.\d+-/, `FROM ${image}: tag ${tag} is not a full version`);
    const digest = from.getImageDigest();
    if (digest !== null) assert.match(digest, /^sha256:[a-f0-9]{64}$/);
  }
});

test('every stage runs on the same Node image, an LTS line at least 24', () => {
  const images = new Set(froms.map((f) => `${f.getImageName() ?? ''}:${f.getImageTag() ?? ''}`));
  assert.equal(images.size, 1, `stages disagree: ${[...images].join(', ')}`);
  const tag = froms[0]!.getImageTag() ?? '';
  assert.equal(froms[0]!.getImageName(), 'node');
  const major = Number(/^(\d+)\./.exec(tag)?.[1]);
  assert.ok(major >= 24 && major % 2 === 0, `node ${tag}: not a supported LTS line`);
});

test('the runtime stage installs the filesystem and block tools and no build tool', () => {
  const runs = finalStage().instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => argsOf(i).join(' '));
  const installs = runs.join(' && ');
  for (const pkg of ['util-linux', 'mount', 'e2fsprogs', 'xfsprogs', 'btrfs-progs', 'lvm2', 'thin-provisioning-tools', 'tini']) {
    assert.match(installs, new RegExp(`apt-get install[^&]*\\b${pkg}\\b`), `${pkg} is not installed`);
  }
  assert.match(installs, /--no-install-recommends/);
  assert.match(installs, /rm -rf \/var\/lib\/apt\/lists/);
  for (const forbidden of [/\bnpm (ci|install|i)\b/, /\bbuild-essential\b/, /\bgcc\b/, /\bmake\b/, /\bpython3?\b/, /\bg\+\+/, /\btsc\b/, /\bcurl\b/, /\bwget\b/]) {
    assert.doesNotMatch(installs, forbidden, `runtime stage: ${forbidden}`);
  }
  // The package managers shipped in the base image are removed from the runtime.
  assert.match(installs, /rm -f [^&]*\/usr\/local\/bin\/npm\b/);
});

test('the entrypoint runs `lode driver` from the compiled CLI under tini, with the V8 flags for every node process', () => {
  const entrypoints = finalStage().instructions.filter((i) => i.getKeyword() === 'ENTRYPOINT');
  assert.equal(entrypoints.length, 1);
  // tini is PID 1: it forwards signals to the driver and reaps orphaned children.
  assert.deepEqual(JSON.parse(entrypoints[0]!.getArgumentsContent() ?? ''), ['/usr/bin/tini', '--', 'node', '/app/dist/src/cli/main.js', 'driver']);
  // The memory flags are the ones tests and benchmarks run the driver with, so what we measure
  // is what we ship; in NODE_OPTIONS they also hold for a command given in place of the entrypoint.
  const envs = dockerfile.getENVs().filter((e) => finalStage().instructions.some((i) => i.getRange().start.line === e.getRange().start.line));
  const nodeOptions = envs.flatMap((e) => e.getProperties()).filter((p) => p.getName() === 'NODE_OPTIONS');
  assert.equal(nodeOptions.length, 1, 'the runtime stage sets NODE_OPTIONS once');
  assert.equal(nodeOptions[0]!.getValue(), DRIVER_NODE_FLAGS.join(' '));
  const workdir = finalStage().instructions.find((i) => i.getKeyword() === 'WORKDIR');
  assert.equal(workdir && argsOf(workdir)[0], '/app');
});

test('.dockerignore lets in only what the build copies', () => {
  const ignore = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  assert.equal(ignore[0], '**', 'everything is excluded first');
  for (const p of ['!package.json', '!package-lock.json', '!tsconfig.json', '!proto/**', '!src/**', 'src/gen']) assert.ok(ignore.includes(p), p);
  for (const c of dockerfile.getCOPYs()) {
    if (c.getFromFlag()) continue;
    const sources = argsOf(c).slice(0, -1);
    for (const src of sources) assert.ok(ignore.includes(`!${src}`) || ignore.includes(`!${src}/**`), `COPY ${src} is excluded by .dockerignore`);
  }
});

/** Where the runtime stage's COPY sources come from in this checkout (the build stage ran `npm run build` here too). */
function localSource(from: string | null, src: string): string {
  if (from === null) return path.join(REPO_ROOT, src);
  if (from === 'build' && src.startsWith('/src/')) return path.join(REPO_ROOT, src.slice('/src/'.length));
  if (from === 'deps' && src === '/src/node_modules') return path.join(REPO_ROOT, 'node_modules');
  throw new Error(`unexpected COPY --from=${from} ${src}`);
}

test('the runtime stage\'s COPY set is enough to run the CLI and the probe command', async (t) => {
  // Rebuild /app as the final stage lays it out, from this checkout's build, and run what the
  // image and the DaemonSet run. A missing COPY (package.json, proto/) shows up here.
  const app = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-image-'));
  t.after(() => fs.rm(app, { recursive: true, force: true }));
  const stage = finalStage();
  const copies = stage.instructions.filter((i) => i.getKeyword() === 'COPY');
  assert.ok(copies.length >= 3);
  for (const c of dockerfile.getCOPYs().filter((x) => copies.some((y) => y.getRange().start.line === x.getRange().start.line))) {
    const from = c.getFromFlag()?.getValue() ?? null;
    const [src = '', dest = ''] = argsOf(c);
    const target = path.resolve(app, dest === './' ? path.basename(src) : dest);
    const source = localSource(from, src);
    if (path.basename(source) === 'node_modules') await fs.symlink(source, target);
    else await fs.cp(source, target, { recursive: true });
  }
  const run = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      execFile(process.execPath, args, { cwd: app, env: { ...process.env, LODE_METRICS_ADDRESS: '' } }, (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, out: stdout + stderr });
      });
    });
  const help = await run([path.join(app, 'dist/src/cli/main.js'), 'driver', '--help']);
  assert.equal(help.code, 0, help.out);
  assert.match(help.out, /usage: lode driver/);
  const probe = await run([path.join(app, 'dist/src/metrics/health-probe.js')]);
  assert.equal(probe.code, 2, probe.out);
  assert.match(probe.out, /usage: health-probe/);
  // The CSI contract loads from /app/proto at run time.
  const proto = await run(['--input-type=module', '-e',
    `import { csiPackage } from ${JSON.stringify(path.join(app, 'dist/src/csi/proto.js'))}; csiPackage(); console.log('proto ok');`]);
  assert.equal(proto.code, 0, proto.out);
  assert.match(proto.out, /proto ok/, 'the import ran to the end');
});

test('the DaemonSet runs the image\'s entrypoint as it is: no command, no args, no NODE_OPTIONS of its own', () => {
  // A command override (e.g. a shell script ending in `exec node ...`) would bypass tini, and
  // a NODE_OPTIONS of its own would replace the memory flags.
  interface Container { name: string; command?: unknown; args?: unknown; env?: Array<{ name: string }> }
  const ds = parseYaml(readFileSync(path.join(REPO_ROOT, 'deploy', 'base', 'daemonset.yaml'), 'utf8')) as { spec: { template: { spec: { containers: Container[] } } } };
  const lode = ds.spec.template.spec.containers.find((c) => c.name === 'lode');
  assert.ok(lode);
  assert.equal(lode.command, undefined);
  assert.equal(lode.args, undefined);
  assert.ok(!(lode.env ?? []).some((e) => e.name === 'NODE_OPTIONS'));
});

/** A node_modules of the production dependencies only (as `npm ci --omit=dev` lays it out), linked from this checkout's. */
async function productionModules(dir: string): Promise<string[]> {
  const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
  const names: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
    if (!m?.[1] || entry.dev === true || entry.devOptional === true) continue;
    names.push(m[1]);
    await fs.mkdir(path.dirname(path.join(dir, m[1])), { recursive: true });
    await fs.symlink(path.join(REPO_ROOT, 'node_modules', m[1]), path.join(dir, m[1]));
  }
  return names;
}

test('production code loads with the production dependencies alone', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-prod-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const names = await productionModules(path.join(dir, 'node_modules'));
  assert.ok(names.includes('@kubernetes/client-node'), 'lode bench loads it (its API server\'s schemas)');
  assert.ok(names.includes('@grpc/grpc-js'));
  await fs.cp(path.join(REPO_ROOT, 'dist', 'src'), path.join(dir, 'dist', 'src'), { recursive: true });
  await fs.cp(path.join(REPO_ROOT, 'package.json'), path.join(dir, 'package.json'));
  // Every compiled module but the CLI entry (which runs on import): a runtime import of a dev
  // dependency anywhere fails here. Node resolves packages from the real path of a module, so
  // the files are copies, not links.
  const files: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.js') && p !== path.join(dir, 'dist', 'src', 'cli', 'main.js')) files.push(p);
    }
  };
  await walk(path.join(dir, 'dist', 'src'));
  assert.ok(files.length > 20);
  // The bench imports client-node at runtime (its schemas); imported here too, should no module above do it.
  const kubeClient = path.join(dir, 'dist', 'src', 'kube', 'kube-client.js');
  const script = `for (const f of ${JSON.stringify(files)}) await import(f); await import(${JSON.stringify(kubeClient)}).then(() => import('@kubernetes/client-node')); console.log('loaded ' + ${files.length});`;
  const r = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: dir }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, out: stdout + stderr });
    });
  });
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`loaded ${files.length}`));
});
