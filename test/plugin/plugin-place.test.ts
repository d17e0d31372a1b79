// Where kubectl lode sits among src/'s folders: a client of the API above kube, util and the driver's pure parts, which nothing else imports.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Every relative import under src/, as [from, to] repository paths. */
function imports(): Array<[string, string]> {
  const files = (readdirSync(path.join(REPO, 'src'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join('src', f));
  const out: Array<[string, string]> = [];
  for (const file of files) {
    for (const m of readFileSync(path.join(REPO, file), 'utf8').matchAll(/\bfrom\s*'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)) {
      out.push([file, path.join(path.dirname(file), m[1] ?? m[2] ?? '').replace(/\.js$/, '.ts')]);
    }
  }
  return out;
}

/** The metrics modules a client may read: the names and the text format, which load no registry (prom-client). */
const PURE_METRICS = new Set(['src/metrics/metric-names.ts', 'src/metrics/exposition-text.ts']);

it('src/plugin imports neither the bench, the CLI nor the driver\'s metrics registry, and nothing outside it imports src/plugin', () => {
  const all = imports();
  const mine = all.filter(([from]) => from.startsWith('src/plugin/'));
  assert.ok(mine.some(([, to]) => to === 'src/kube/kube-errors.ts'), 'the plugin\'s imports are read');
  assert.deepEqual(mine.filter(([, to]) => ['src/bench/', 'src/cli/', 'src/metrics/'].some((d) => to.startsWith(d)) && !PURE_METRICS.has(to)), []);
  for (const f of PURE_METRICS) {
    assert.doesNotMatch(readFileSync(path.join(REPO, f), 'utf8'), /^import (?!type)/m, `${f} imports nothing at run time, so the plugin loads no registry through it`);
  }
  assert.deepEqual(all.filter(([from, to]) => !from.startsWith('src/plugin/') && to.startsWith('src/plugin/')), []);
});
