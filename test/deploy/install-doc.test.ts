// docs/install.md against what ships: the memory request, the dependencies it names, the base image, the V8 flags, the sidecar versions, how to build the image, and every permission the roles grant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { parseBytes } from '../../src/util/quantity.js';
import { DRIVER_NODE_FLAGS } from '../../src/util/driver-node-flags.js';
import { renderBaseWith, renderSkip, renderKustomization, REPO_ROOT } from './render.js';
import { grants } from './rbac-grants.js';

const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8').replace(/\s+/g, ' ');
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string>;
};
const skip = renderSkip() ?? false;

async function daemonSet(): Promise<IDaemonSet> {
  const objects = await renderKustomization(path.join(REPO_ROOT, 'deploy', 'base'));
  return objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
}

test('install.md gives the lode container\'s memory request as the DaemonSet sets it', { skip }, async () => {
  const lode = (await daemonSet()).spec?.template.spec?.containers.find((c) => c.name === 'lode');
  const request = lode?.resources?.requests?.['memory'];
  assert.ok(request !== undefined);
  const m = /The `lode` container requests (\d+) MiB of memory/.exec(doc);
  assert.ok(m, 'install.md states the memory request');
  assert.equal(Number(m[1]) * 2 ** 20, parseBytes(String(request)));
});

test('install.md calls each package it names a runtime or development dependency as package.json does', () => {
  const named = [...doc.matchAll(/`(@?[a-z0-9][\w./-]*)`,? (?:is )?an? (runtime|development) dependency/g)];
  assert.ok(named.length > 0, 'install.md says what kind of dependency the API client is');
  for (const [, name, kind] of named) {
    const where = kind === 'runtime' ? pkg.dependencies : pkg.devDependencies;
    assert.ok(name! in where, `install.md calls ${name} a ${kind} dependency; package.json disagrees`);
  }
});

test('install.md names the Dockerfile\'s base image and V8 flags, and the build command that exists', () => {
  const base = /^FROM\s+(\S+)/m.exec(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1];
  assert.ok(base);
  assert.ok(doc.includes(`\`${base}\``), `install.md names the base image ${base}`);
  assert.ok(doc.includes(DRIVER_NODE_FLAGS.join(' ')), 'install.md gives the V8 flags the image sets');
  assert.ok(doc.includes('npm run image') && pkg.scripts['image'] !== undefined, 'install.md builds with npm run image, which package.json has');
});

test('install.md lists the sidecar versions the DaemonSet runs, and its overlay replaces the image the DaemonSet names', { skip }, async () => {
  const containers = (await daemonSet()).spec?.template.spec?.containers ?? [];
  for (const c of containers) {
    const [repo, tag] = (c.image ?? '').split(':');
    const name = path.basename(repo ?? '');
    if (c.name === 'lode') {
      assert.match(doc, new RegExp(`images: - name: ${(repo ?? '').replace(/[.]/g, '\\.')} newName:`), `the overlay in install.md replaces ${repo ?? ''}`);
      continue;
    }
    assert.ok(doc.includes(`${name} ${tag ?? ''}`), `install.md lists ${name} ${tag ?? ''}`);
  }
});

/** The permission rows of install.md's "Permissions" section, as "Kind name group/resource/verb[names]". */
function documentedPermissions(): Set<string> {
  const raw = readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const start = raw.indexOf('\n## Permissions\n');
  assert.ok(start >= 0, 'install.md has a Permissions section');
  const section = raw.slice(start, raw.indexOf('\n## ', start + 1));
  const out = new Set<string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const role = /^(ClusterRole|Role) `([\w-]+)`$/.exec(cells[1] ?? '');
    if (!role) continue;
    const group = cells[2] === 'core' ? '' : (cells[2] ?? '').replace(/`/g, '');
    const resource = (cells[3] ?? '').replace(/`/g, '');
    const only = /\(only `([^`]+)`\)/.exec(cells[4] ?? '');
    const verbs = (cells[4] ?? '').replace(/\(only `[^`]+`\)/, '').split(',').map((v) => v.trim()).filter((v) => v !== '');
    assert.ok((cells[5] ?? '').length > 10, `install.md says why for ${line}`);
    for (const v of verbs) out.add(`${role[1]} ${role[2]} ${group}/${resource}/${v}${only ? `[${only[1]}]` : ''}`);
  }
  return out;
}

test('install.md lists every permission deploy/base and the node-loss component grant, and none they do not', { skip }, async () => {
  const objects = await renderBaseWith(['node-loss']);
  const granted = new Set<string>();
  for (const o of objects.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
    for (const g of grants([o])) {
      const m = /^(.*?)\/(.+)\/(\w+)(@ns)?(\[.*\])?$/.exec(g)!;
      granted.add(`${o.kind} ${o.metadata.name} ${m[1]}/${m[2]}/${m[3]}${m[5] ?? ''}`);
    }
  }
  const documented = documentedPermissions();
  assert.deepEqual([...granted].filter((g) => !documented.has(g)).sort(), [], 'granted but not in install.md');
  assert.deepEqual([...documented].filter((d) => !granted.has(d)).sort(), [], 'in install.md but not granted');
});

test('install.md counts the roles deploy/base ships', { skip }, async () => {
  const objects = await renderKustomization(path.join(REPO_ROOT, 'deploy', 'base'));
  const m = /ServiceAccount `lode-node`, (\d+) ClusterRoles, (\d+) Roles and bindings/.exec(doc);
  assert.ok(m, 'install.md lists the roles among what gets installed');
  assert.equal(Number(m[1]), objects.filter((o) => o.kind === 'ClusterRole').length);
  assert.equal(Number(m[2]), objects.filter((o) => o.kind === 'Role').length);
});
