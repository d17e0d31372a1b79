// `lode plan` at the size of a real cluster: 10,000 pods (StatefulSets of mixed claim sizes) planned onto some 1,000 nodes of two groups, timed end to end as a user runs it (YAML in, tables out), per scoring shape.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PODS = Number(process.env.LODE_BENCH_PLAN_PODS ?? '10000');
const REPLICAS = 2;
/** Claim sizes in GiB, one per StatefulSet in turn: uneven, so where a claim lands decides how full nodes get. */
const SIZES = [30, 25, 20, 25, 10];

/** A template with one loop pool of `size` and room for 110 pods. */
function template(name: string, cpu: string, memory: string, size: string): string {
  return `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: {node.kubernetes.io/instance-type: ${name}}
status:
  allocatable: {cpu: "${cpu}", memory: ${memory}, pods: "110"}
---
apiVersion: plan.lode.csi.dev/v1alpha1
kind: NodePools
pools:
  - spec: local=/var/lib/lode/local,size=${size}
`;
}

/** StatefulSets of REPLICAS pods each, their claims' sizes from SIZES in turn. */
function workloads(): string {
  const docs: string[] = [];
  for (let s = 0; s < PODS / REPLICAS; s++) {
    const gi = SIZES[s % SIZES.length]!;
    docs.push(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: app-${s}}
spec:
  serviceName: app-${s}
  replicas: ${REPLICAS}
  selector: {matchLabels: {app: app-${s}}}
  template:
    metadata: {labels: {app: app-${s}}}
    spec:
      containers:
        - name: c
          image: busybox
          resources: {requests: {cpu: 250m, memory: 512Mi}}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: lode-local
        resources: {requests: {storage: ${gi}Gi}}`);
  }
  return docs.join('\n---\n') + '\n';
}

function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lode-plan-bench-'));
  try {
    writeFileSync(path.join(dir, 'small.yaml'), template('small', '8', '32Gi', '100Gi'));
    writeFileSync(path.join(dir, 'large.yaml'), template('large', '16', '64Gi', '300Gi'));
    writeFileSync(path.join(dir, 'workloads.yaml'), workloads());
    console.log(`lode plan: ${PODS} pods (StatefulSets of ${REPLICAS}, claims of ${SIZES.join('/')} GiB) on groups small (100 GiB pool, max=400) and large (300 GiB) (${os.cpus().length} cores, node ${process.version})`);
    for (const scoring of ['spread', 'pack']) {
      const args = [path.join(REPO, 'dist/src/cli/main.js'), 'plan', path.join(REPO, 'deploy/base/storageclasses.yaml'), path.join(dir, 'workloads.yaml'),
        '--node-group', `small=${path.join(dir, 'small.yaml')},max=400`, '--node-group', `large=${path.join(dir, 'large.yaml')}`, '--scoring', scoring, '-o', 'json'];
      const started = process.hrtime.bigint();
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (run.status !== 0) throw new Error(`lode plan exited ${run.status}: ${run.stderr}`);
      const report = JSON.parse(run.stdout) as { pods: { placed: number; unplaced: number }; groups: { name: string; nodes: number }[] };
      const groups = report.groups.map((g) => `${g.name} ${g.nodes}`).join(', ');
      const nodes = report.groups.reduce((n, g) => n + g.nodes, 0);
      console.log(`  --scoring ${scoring.padEnd(6)} ${seconds.toFixed(1)} s   ${report.pods.placed} placed, ${report.pods.unplaced} fit nowhere, ${nodes} nodes (${groups})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
