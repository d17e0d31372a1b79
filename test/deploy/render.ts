// Test helper: renders a kustomization with `kubectl kustomize` and checks every object against the Kubernetes schemas.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import { ResourceQuota } from 'kubernetes-models/v1/ResourceQuota';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { CSIDriver } from 'kubernetes-models/storage.k8s.io/v1/CSIDriver';
import { StorageClass } from 'kubernetes-models/storage.k8s.io/v1/StorageClass';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { findKubectl, KUBECTL_INSTALL, kubectlMissing as missingKubectl } from '../helpers/kubectl.js';
import { missingMessage, skipUnlessRequired } from '../helpers/prerequisites.js';
import { unknownFields } from './strict-fields.js';
import { SNAPSHOT_KINDS, snapshotObjectProblems } from './snapshot-schemas.js';

/** Repository root, from dist/test/deploy/ or test/deploy/. */
export const REPO_ROOT = fileURLToPath(new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url));


/** A rendered object: apiVersion, kind and metadata.name are guaranteed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** Why kubectl cannot render deploy/ here, with how to install it, or undefined when it can. */
export function kubectlMissing(): string | undefined {
  const why = missingKubectl();
  return why === undefined ? undefined : missingMessage(`${why}: cannot render deploy/`, KUBECTL_INSTALL);
}

/** The `skip` option of a test that renders deploy/: why it cannot, or under CI=true a failure of the file. */
export function renderSkip(): string | undefined {
  return skipUnlessRequired(kubectlMissing());
}

/** Runs `kubectl kustomize DIR` and returns the objects, in order. */
export function renderKustomization(dir: string): Promise<K8sObject[]> {
  return new Promise((resolve, reject) => {
    const kubectl = findKubectl();
    if (kubectl === undefined) {
      reject(new Error(kubectlMissing()));
      return;
    }
    execFile(kubectl, ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`kubectl kustomize ${dir} failed: ${stderr || err.message}`));
        return;
      }
      try {
        resolve(parseObjects(stdout, `kubectl kustomize ${dir}`));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}

/**
 * deploy/base with kustomize components (names of directories under deploy/components), from an
 * overlay written to a temporary directory: what an operator's overlay with `components:` renders.
 */
export async function renderBaseWith(components: readonly string[]): Promise<K8sObject[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'lode-overlay-'));
  try {
    writeFileSync(path.join(dir, 'kustomization.yaml'), [
      'apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization',
      'resources:', `  - ${path.relative(dir, path.join(REPO_ROOT, 'deploy', 'base'))}`,
      'components:', ...components.map((c) => `  - ${path.relative(dir, path.join(REPO_ROOT, 'deploy', 'components', c))}`), '',
    ].join('\n'));
    return await renderKustomization(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Parses a multi-document YAML stream into objects; empty documents are an error (a stray '---'). */
export function parseObjects(text: string, source: string): K8sObject[] {
  return parseAllDocuments(text).map((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`${source}, document ${i + 1}: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (!isObject(value) || typeof value['apiVersion'] !== 'string' || typeof value['kind'] !== 'string') {
      throw new Error(`${source}, document ${i + 1}: not a Kubernetes object`);
    }
    const meta = value['metadata'];
    if (!isObject(meta) || typeof meta['name'] !== 'string') {
      throw new Error(`${source}, document ${i + 1}: ${value['kind']} without metadata.name`);
    }
    return value as K8sObject;
  });
}

type Validator = (obj: K8sObject) => void;

// One model per kind we ship; an unknown kind fails the test so a new object gets checked too.
// The casts are safe only because validate() checks the data against the schema right after.
const MODELS: Record<string, Validator> = {
  'v1/Namespace': (o) => new Namespace(o as unknown as ConstructorParameters<typeof Namespace>[0]).validate(),
  'v1/ServiceAccount': (o) => new ServiceAccount(o as unknown as ConstructorParameters<typeof ServiceAccount>[0]).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as unknown as ConstructorParameters<typeof ConfigMap>[0]).validate(),
  'v1/ResourceQuota': (o) => new ResourceQuota(o as unknown as ConstructorParameters<typeof ResourceQuota>[0]).validate(),
  'v1/PersistentVolumeClaim': (o) => new PersistentVolumeClaim(o as unknown as ConstructorParameters<typeof PersistentVolumeClaim>[0]).validate(),
  'v1/Pod': (o) => new Pod(o as unknown as ConstructorParameters<typeof Pod>[0]).validate(),
  'apps/v1/DaemonSet': (o) => new DaemonSet(o as unknown as ConstructorParameters<typeof DaemonSet>[0]).validate(),
  'storage.k8s.io/v1/CSIDriver': (o) => new CSIDriver(o as unknown as ConstructorParameters<typeof CSIDriver>[0]).validate(),
  'storage.k8s.io/v1/StorageClass': (o) => new StorageClass(o as unknown as ConstructorParameters<typeof StorageClass>[0]).validate(),
  'rbac.authorization.k8s.io/v1/ClusterRole': (o) => new ClusterRole(o as unknown as ConstructorParameters<typeof ClusterRole>[0]).validate(),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': (o) =>
    new ClusterRoleBinding(o as unknown as ConstructorParameters<typeof ClusterRoleBinding>[0]).validate(),
  'rbac.authorization.k8s.io/v1/Role': (o) => new Role(o as unknown as ConstructorParameters<typeof Role>[0]).validate(),
  'rbac.authorization.k8s.io/v1/RoleBinding': (o) => new RoleBinding(o as unknown as ConstructorParameters<typeof RoleBinding>[0]).validate(),
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': (o) =>
    new ValidatingAdmissionPolicy(o as unknown as ConstructorParameters<typeof ValidatingAdmissionPolicy>[0]).validate(),
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': (o) =>
    new ValidatingAdmissionPolicyBinding(o as unknown as ConstructorParameters<typeof ValidatingAdmissionPolicyBinding>[0]).validate(),
};

/** Where each kind's model type is declared, for the unknown-field check. */
const MODEL_FILES: Record<string, string> = {
  'v1/Namespace': 'v1/Namespace',
  'v1/ServiceAccount': 'v1/ServiceAccount',
  'v1/ConfigMap': 'v1/ConfigMap',
  'v1/ResourceQuota': 'v1/ResourceQuota',
  'v1/PersistentVolumeClaim': 'v1/PersistentVolumeClaim',
  'v1/Pod': 'v1/Pod',
  'apps/v1/DaemonSet': 'apps/v1/DaemonSet',
  'storage.k8s.io/v1/CSIDriver': 'storage.k8s.io/v1/CSIDriver',
  'storage.k8s.io/v1/StorageClass': 'storage.k8s.io/v1/StorageClass',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'rbac.authorization.k8s.io/v1/ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
  'rbac.authorization.k8s.io/v1/Role': 'rbac.authorization.k8s.io/v1/Role',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'rbac.authorization.k8s.io/v1/RoleBinding',
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding',
};

/**
 * Validates one object with its kubernetes-models schema (types, required fields, enums) and
 * rejects fields the schema does not know (a misspelt `mountPropogation` would otherwise be
 * silently dropped by the API server). Snapshot kinds, which are custom resources, are checked
 * against their CRD schemas (snapshot-schemas.ts). Throws with the kind, name and problem.
 */
export function validateObject(obj: K8sObject): void {
  const key = `${obj.apiVersion}/${obj.kind}`;
  if (SNAPSHOT_KINDS.includes(key)) {
    const problems = snapshotObjectProblems(obj);
    if (problems.length > 0) throw new Error(`${obj.kind} ${obj.metadata.name} fails its CRD schema: ${problems.join('; ')}`);
    return;
  }
  const validate = MODELS[key];
  const file = MODEL_FILES[key];
  if (!validate || !file) throw new Error(`no schema model registered for ${key} (${obj.metadata.name}); add it in test/deploy/render.ts`);
  try {
    validate(obj);
  } catch (err) {
    throw new Error(`${obj.kind} ${obj.metadata.name} fails its schema: ${err instanceof Error ? err.message : String(err)}`);
  }
  const unknown = unknownFields(obj, file);
  if (unknown.length > 0) throw new Error(`${obj.kind} ${obj.metadata.name} has fields unknown to its schema: ${unknown.join(', ')}`);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
