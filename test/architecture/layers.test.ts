// The driver's layers, read from the import lines of src/driver: no import runs up a layer or across between sibling layers, and no two folders import each other round a circle; below it, the volume catalog (src/catalog) drives the backends, which implement the interface of src/pool, and nothing reaches back up; the planner (src/plan) sits above the bench and the driver.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** A tree in layers: folders (relative to `root`, '.' for the root's own files) from the top down; folders in one row are siblings. */
interface House {
  root: string;
  layers: string[][];
  /** Folders of src/ outside this tree that it must never import (they sit above it). */
  above: string[];
}

export const DRIVER: House = {
  root: 'src/driver',
  layers: [
    ['.'], // the composition root: starts the driver, wires the services
    ['controller', 'node'], // the CSI services: Identity and Controller; Node
    ['context'], // what every handler works with: settings, catalog, locks, topology
    ['cluster'], // the features on the Kubernetes API: node loss, orphans, pod reservations
    ['mount'], // how a volume appears on this node, over sys/
    ['request'], // reading requests, no I/O
    ['rpc'], // the gRPC seam: adapter, bounds, deadlines, errors, locks, paging
  ],
  above: ['src/cli', 'src/bench', 'src/plan', 'src/metrics'],
};

/** One import line: the file that has it and the file it names, both relative to the repository. */
export interface Import {
  from: string;
  to: string;
}

/** The relative imports of every .ts file under `dir` (repository-relative), resolved to the .ts files they name. */
export function readImports(repo: string, dir: string): { files: string[]; imports: Import[] } {
  const files = (readdirSync(path.join(repo, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f))
    .sort();
  const imports: Import[] = [];
  // Static imports and re-exports (over several lines too), side-effect imports and dynamic imports.
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*'([^']+)'|(?:^|\n)\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;
  for (const file of files) {
    const text = readFileSync(path.join(repo, file), 'utf8');
    for (const m of text.matchAll(pattern)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? '';
      if (!spec.startsWith('.')) continue;
      imports.push({ from: file, to: path.join(path.dirname(file), spec).replace(/\.js$/, '.ts') });
    }
  }
  return { files, imports };
}

/** The layer folder of a file of the house (its first folder below the root, '.' for the root's own files), or undefined when outside. */
function layerFolder(house: House, file: string): string | undefined {
  const rel = path.relative(house.root, file);
  if (rel.startsWith('..')) return undefined;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? '.' : parts[0];
}

function rowOf(house: House, folder: string): number {
  return house.layers.findIndex((row) => row.includes(folder));
}

/** Every way the imports break the house's layers, one sentence each; empty when they keep them. */
export function layerProblems(house: House, files: readonly string[], imports: readonly Import[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const folder = layerFolder(house, file);
    if (folder !== undefined && rowOf(house, folder) < 0) problems.push(`${file} is in ${house.root}/${folder}, which is in no layer: place the folder in the layer map`);
  }
  for (const { from, to } of imports) {
    const fromFolder = layerFolder(house, from);
    if (fromFolder === undefined) continue;
    const above = house.above.find((dir) => !path.relative(dir, to).startsWith('..'));
    if (above !== undefined) {
      problems.push(`${from} imports ${to}: ${above} sits above ${house.root}`);
      continue;
    }
    const toFolder = layerFolder(house, to);
    if (toFolder === undefined || toFolder === fromFolder) continue;
    const fromRow = rowOf(house, fromFolder);
    const toRow = rowOf(house, toFolder);
    if (fromRow < 0 || toRow < 0) continue;
    if (toRow < fromRow) problems.push(`${from} imports ${to}: up from ${fromFolder} to ${toFolder}`);
    else if (toRow === fromRow) problems.push(`${from} imports ${to}: across from ${fromFolder} to its sibling ${toFolder}`);
  }
  return problems;
}

/** The circles between folders (at every depth: a feature folder counts on its own), each as the folders it passes through. */
export function folderCycles(imports: readonly Import[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    const a = path.dirname(from);
    const b = path.dirname(to);
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)?.add(b);
  }
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (state.get(node) === undefined) visit(node);
  return cycles;
}

describe('driver layers', () => {
  it('the checks see an import up a layer, one across to a sibling, one into a folder above the driver, a folder in no layer, and a circle', () => {
    const files = ['src/driver/server.ts', 'src/driver/rpc/errors.ts', 'src/driver/node/kit.ts', 'src/driver/controller/volumes.ts', 'src/driver/extra/x.ts'];
    const imports: Import[] = [
      { from: 'src/driver/server.ts', to: 'src/driver/rpc/errors.ts' },
      { from: 'src/driver/rpc/errors.ts', to: 'src/driver/node/kit.ts' },
      { from: 'src/driver/node/kit.ts', to: 'src/driver/controller/volumes.ts' },
      { from: 'src/driver/node/kit.ts', to: 'src/metrics/driver-metrics.ts' },
      { from: 'src/driver/node/kit.ts', to: 'src/pool/backend.ts' },
    ];
    assert.deepEqual(layerProblems(DRIVER, files, imports), [
      'src/driver/extra/x.ts is in src/driver/extra, which is in no layer: place the folder in the layer map',
      'src/driver/rpc/errors.ts imports src/driver/node/kit.ts: up from rpc to node',
      'src/driver/node/kit.ts imports src/driver/controller/volumes.ts: across from node to its sibling controller',
      'src/driver/node/kit.ts imports src/metrics/driver-metrics.ts: src/metrics sits above src/driver',
    ]);
    assert.deepEqual(folderCycles(imports), [], 'imports that all run one way make no circle');
    const circle = folderCycles([
      { from: 'src/driver/cluster/orphans/a.ts', to: 'src/driver/context/b.ts' },
      { from: 'src/driver/context/b.ts', to: 'src/driver/cluster/orphans/c.ts' },
    ]);
    assert.deepEqual(circle, [['src/driver/cluster/orphans', 'src/driver/context', 'src/driver/cluster/orphans']]);
  });

  it('the import lines of src/driver are read from the checkout, as many as the code has', () => {
    const { files, imports } = readImports(REPO, DRIVER.root);
    assert.ok(files.includes('src/driver/server.ts'), 'the driver\'s files are read from the checkout');
    assert.ok(imports.length > 100, `only ${imports.length} imports read: the pattern has stopped matching the code's import lines`);
    assert.ok(imports.some((i) => i.from === 'src/driver/server.ts' && i.to === 'src/driver/controller/service.ts'));
  });

  it('no import in src/driver goes up a layer or across between siblings, and no folders import each other round a circle', () => {
    const { files, imports } = readImports(REPO, DRIVER.root);
    assert.deepEqual(layerProblems(DRIVER, files, imports), []);
    assert.deepEqual(folderCycles(imports), []);
  });
});

describe('catalog, backends and pools', () => {
  it('the volume catalog (src/catalog) drives the backends: nothing in src/pool or src/backends imports it, and it imports no backend and nothing of the driver', () => {
    const up = ['src/pool', 'src/backends']
      .flatMap((dir) => readImports(REPO, dir).imports)
      .filter((i) => i.to.startsWith('src/catalog/'))
      .map((i) => `${i.from} imports ${i.to}`);
    assert.deepEqual(up, []);
    const catalog = readImports(REPO, 'src/catalog');
    const out = catalog.imports
      .filter((i) => ['src/backends/', 'src/driver/', 'src/cli/', 'src/bench/', 'src/plan/', 'src/metrics/'].some((dir) => i.to.startsWith(dir)))
      .map((i) => `${i.from} imports ${i.to}`);
    assert.deepEqual(out, []);
    assert.ok(catalog.imports.some((i) => i.from === 'src/catalog/volume-catalog.ts' && i.to === 'src/catalog/volume-lifecycle.ts'), 'the catalog\'s own imports are read');
    assert.ok(catalog.imports.some((i) => i.to === 'src/pool/backend.ts'), 'and they name the backend interface below');
  });

  it('the backends implement the interface of src/pool, and no backend imports another', () => {
    const { imports } = readImports(REPO, 'src/backends');
    // A backend is a folder (dir, loop, lvm); the files beside them are helpers they share, and the registry builds them all.
    const backendOf = (file: string): string | undefined => {
      const parts = file.split('/');
      return parts.length > 3 && parts[1] === 'backends' ? parts[2] : undefined;
    };
    const across = imports
      .filter((i) => backendOf(i.from) !== undefined && backendOf(i.to) !== undefined && backendOf(i.from) !== backendOf(i.to))
      .map((i) => `${i.from} imports ${i.to}`);
    assert.ok(imports.some((i) => backendOf(i.from) === 'lvm' && i.to === 'src/pool/backend.ts'), 'the backends\' imports are read');
    assert.deepEqual(across, []);
  });
});

describe('the planner', () => {
  it('src/plan sits above the bench and the driver: nothing below imports it, and it imports nothing of the command line', () => {
    const below = ['src/bench', 'src/driver', 'src/catalog', 'src/pool', 'src/backends', 'src/sys', 'src/util', 'src/kube', 'src/metrics']
      .flatMap((dir) => readImports(REPO, dir).imports)
      .filter((i) => i.to.startsWith('src/plan/'))
      .map((i) => `${i.from} imports ${i.to}`);
    assert.deepEqual(below, []);
    const plan = readImports(REPO, 'src/plan');
    assert.ok(plan.imports.some((i) => i.from === 'src/plan/planner.ts' && i.to === 'src/bench/controllers/scheduler/volume-binding.ts'), 'the planner\'s imports are read: it uses the bench\'s VolumeBinding plugin');
    assert.deepEqual(plan.imports.filter((i) => i.to.startsWith('src/cli/')).map((i) => `${i.from} imports ${i.to}`), []);
  });
});
