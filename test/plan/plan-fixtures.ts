// Workloads and node-group templates for the planner's tests, written as files the way a user writes them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Lode's own storage classes, as a user passes them. */
export const LODE_CLASSES = path.join(REPO_ROOT, 'deploy/base/storageclasses.yaml');

/** A temporary directory removed after the test. */
export function tempDir(t: { after(fn: () => void): void }): { dir: string; write(name: string, text: string): string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lode-plan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, write: (name, text) => { const f = path.join(dir, name); writeFileSync(f, text); return f; } };
}

/** A template: a Node (allocatable as given) and its pools, each `{ spec, disk?, filesystem? }`. */
export function template(name: string, pools: { spec: string; disk?: string; filesystem?: string }[], allocatable: Record<string, string> = { pods: '110' }): string {
  const alloc = Object.entries(allocatable).map(([k, v]) => `    ${k}: "${v}"`).join('\n');
  const list = pools.map((p) => [`  - spec: ${p.spec}`, ...(p.disk ? [`    disk: ${p.disk}`] : []), ...(p.filesystem ? [`    filesystem: ${p.filesystem}`] : [])].join('\n')).join('\n');
  return `apiVersion: v1
kind: Node
metadata:
  name: ${name}
status:
  allocatable:
${alloc}
---
apiVersion: plan.lode.csi.dev/v1alpha1
kind: NodePools
pools:
${list}
`;
}

/** A pod with one claim of `size` in `storageClass` (the claim written beside it), optionally requesting cpu. */
export function podWithClaim(name: string, size: string, opts: { storageClass?: string; cpu?: string; volumeMode?: string } = {}): string {
  return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ${name}-data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ${opts.storageClass ?? 'lode-local'}
  ${opts.volumeMode ? `volumeMode: ${opts.volumeMode}` : ''}
  resources: {requests: {storage: ${size}}}
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  containers:
    - name: c
      image: busybox
      ${opts.cpu ? `resources: {requests: {cpu: "${opts.cpu}"}}` : ''}
  volumes: [{name: data, persistentVolumeClaim: {claimName: ${name}-data}}]
`;
}

/** A StatefulSet of `replicas` pods, each with one claim of `size`. */
export function statefulSet(name: string, replicas: number, size: string, storageClass = 'lode-local'): string {
  return `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}}
spec:
  serviceName: ${name}
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: c, image: busybox}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: ${storageClass}
        resources: {requests: {storage: ${size}}}
`;
}
