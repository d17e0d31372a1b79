// Test support: the rendered DaemonSet's pod as a container engine needs it: each container's environment, its mounts on a stand-in host directory, its arguments with paths as the host sees them.
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { renderKustomization, REPO_ROOT } from '../deploy/render.js';

/** What kubelet knows about a pod that the manifest refers to (downward API fields). */
export interface PodFacts {
  nodeName: string;
  podName: string;
}

export interface RenderedPod {
  namespace: string;
  spec: IPodSpec;
}

/** The DaemonSet's pod template from `kubectl kustomize deploy/base`: what `kubectl apply -k` would send. */
export async function renderedPod(): Promise<RenderedPod> {
  const objects = await renderKustomization(path.join(REPO_ROOT, 'deploy', 'base'));
  const found = objects.filter((o) => o.kind === 'DaemonSet');
  if (found.length !== 1) throw new Error(`deploy/base renders ${found.length} DaemonSets, expected 1`);
  const ds = found[0] as unknown as IDaemonSet;
  const spec = ds.spec?.template.spec;
  if (spec === undefined) throw new Error('the DaemonSet has no pod spec');
  return { namespace: ds.metadata?.namespace ?? 'default', spec };
}

export function containerOf(pod: RenderedPod, name: string): IContainer {
  const c = pod.spec.containers.find((x) => x.name === name);
  if (c === undefined) throw new Error(`the DaemonSet has no container "${name}"`);
  return c;
}

/**
 * The container's environment as kubelet would set it: literal values with $(VAR) references to
 * earlier variables expanded (an unknown reference stays as written, as kubelet leaves it), and the
 * downward API fields the manifest uses. A field this does not know fails, so a new one gets a value here.
 */
export function containerEnv(pod: RenderedPod, c: IContainer, facts: PodFacts): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
      continue;
    }
    const field = e.valueFrom?.fieldRef?.fieldPath;
    const fields: Record<string, string> = { 'spec.nodeName': facts.nodeName, 'metadata.namespace': pod.namespace, 'metadata.name': facts.podName };
    const v = field !== undefined ? fields[field] : undefined;
    if (v === undefined) throw new Error(`env ${e.name} of container ${c.name}: no value for ${JSON.stringify(e.valueFrom)}`);
    env[e.name] = v;
  }
  return env;
}

export interface Mount {
  /** The directory on the (stand-in) host. */
  source: string;
  /** Where the container sees it. */
  target: string;
  readOnly: boolean;
  /** Kubernetes' mountPropagation as the engine's bind propagation. */
  propagation: 'rshared' | 'rslave' | 'rprivate';
}

/**
 * The container's mounts. `hostDir` says where a hostPath volume's path is on the stand-in host;
 * `contentDir` where the files of a configMap or projected volume were written.
 */
export function containerMounts(pod: RenderedPod, c: IContainer, hostDir: (p: string) => string, contentDir: (volume: string) => string): Mount[] {
  return (c.volumeMounts ?? []).map((m) => {
    const volume = pod.spec.volumes?.find((v) => v.name === m.name);
    if (volume === undefined) throw new Error(`container ${c.name} mounts volume ${m.name}, which the pod does not have`);
    let source: string;
    if (volume.hostPath !== undefined) source = hostDir(volume.hostPath.path);
    else if (volume.configMap !== undefined || volume.projected !== undefined) source = contentDir(m.name);
    else throw new Error(`volume ${m.name}: only hostPath, configMap and projected volumes are handled here`);
    const propagation = m.mountPropagation === 'Bidirectional' ? 'rshared' : m.mountPropagation === 'HostToContainer' ? 'rslave' : 'rprivate';
    return { source, target: m.mountPath, readOnly: m.readOnly === true, propagation };
  });
}

/** A path inside the container as the host sees it, through the container's mounts; undefined when no mount holds it. */
export function hostPathOf(mounts: readonly Mount[], p: string): string | undefined {
  const m = [...mounts].sort((a, b) => b.target.length - a.target.length).find((x) => p === x.target || p.startsWith(x.target + '/'));
  return m === undefined ? undefined : path.join(m.source, p.slice(m.target.length));
}

/** A sidecar's arguments for a process run on the host: every `--flag=PATH` inside one of its mounts becomes the host's path. */
export function hostArgs(c: IContainer, mounts: readonly Mount[]): string[] {
  return (c.args ?? []).map((a) => {
    const m = /^(--?[A-Za-z0-9-]+=)(\/.*)$/.exec(a);
    const mapped = m ? hostPathOf(mounts, m[2]!) : undefined;
    return m && mapped !== undefined ? m[1] + mapped : a;
  });
}

/** The container port with this name (a probe's named port). */
export function namedPort(c: IContainer, name: string): number {
  const p = c.ports?.find((x) => x.name === name);
  if (p === undefined) throw new Error(`container ${c.name} has no port named ${name}`);
  return p.containerPort;
}
