// docs/install.md against what ships: the memory request, the dependencies it names, the base image, the V8 flags, the sidecar versions and how to build the image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { parseSize } from '../../src/pool/sizes.js';
import { DRIVER_NODE_FLAGS } from '../../src/util/driver-node-flags.js';
import { renderSkip, renderKustomization, REPO_ROOT } from './render.js';

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
  assert.equal(Number(m[1]) * 2 ** 20, parseSize(String(request)));
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
