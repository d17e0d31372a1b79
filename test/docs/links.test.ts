// README.md and docs/*.md against the repository: every relative link leads to a file that exists and, with a #fragment, to a heading of it; the README opens with the two set-up commands as package.json and CI run them, keeps its sections in order and lists every page of docs/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../deploy/render.js';

/** The pages this checks, relative to the repository's root. */
function pages(): string[] {
  const docs = readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** A page's lines outside fenced code blocks (a `#` line in a shell or YAML block is no heading, a `](` there no link). */
function prose(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^\s*(```|~~~)/.exec(line);
    if (m) {
      if (fence === null) fence = m[1]!;
      else if (m[1] === fence) fence = null;
      out.push('');
      continue;
    }
    out.push(fence === null ? line : '');
  }
  return out;
}

/** The anchor a heading gets where the docs are read (lower case; punctuation but `-` and `_` dropped; spaces to `-`). */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor of a page, a repeated heading's second one suffixed `-1`, its third `-2`, and so on. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The targets of a page's inline links and images, code spans left out (a link's text may run over a line break). */
export function linkTargets(text: string): string[] {
  const body = prose(text).join('\n').replace(/`[^`]*`/g, 'code');
  return [...body.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** What is wrong with each relative link of `page` (relative to `root`), read from `text`; [] when every one resolves. */
export function brokenLinks(root: string, page: string, text: string): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like: not ours to check here
    const hash = target.indexOf('#');
    const file = hash === -1 ? target : target.slice(0, hash);
    const fragment = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const resolved = file === '' ? path.join(root, page) : path.join(root, path.dirname(page), decodeURIComponent(file));
    if (file !== '' && (!path.relative(root, resolved).split(path.sep).every((part) => part !== '..') || !existsSync(resolved))) {
      problems.push(`${page}: ${target}: no such file in the repository`);
      continue;
    }
    if (fragment === null) continue;
    if (file !== '' && (statSync(resolved).isDirectory() || !resolved.endsWith('.md'))) {
      problems.push(`${page}: ${target}: a #fragment on something that is not a markdown page`);
      continue;
    }
    const targetText = file === '' ? text : readFileSync(resolved, 'utf8');
    if (!anchors(targetText).has(fragment)) problems.push(`${page}: ${target}: ${path.relative(root, resolved)} has no heading #${fragment}`);
  }
  return problems;
}

test('the anchors follow the heading rules the links rely on', () => {
  const text = '# Lode\n## The Kubernetes API (`--api`)\n## What holds a volume\'s writers\n## Usage\n## Usage\n```sh\n# not a heading\n```\n';
  assert.deepEqual([...anchors(text)], ['lode', 'the-kubernetes-api---api', 'what-holds-a-volumes-writers', 'usage', 'usage-1']);
});

test('a broken link is found: a missing file, a missing heading, a link out of the repository; links in code are not links', () => {
  const page = 'docs/example.md';
  const text = [
    '# Example', 'See [install](install.md), [its image](install.md#the-image) and [here](#example).',
    'Broken: [gone](nowhere.md), [no heading](install.md#no-such-heading), [out](../../etc/passwd), [self](#nothing-here).',
    'A [link over a', 'line break](missing-too.md).', '`[not a link](in-code.md)`', '```', '[nor](in-a-block.md)', '```',
  ].join('\n');
  assert.deepEqual(brokenLinks(REPO_ROOT, page, text), [
    `${page}: nowhere.md: no such file in the repository`,
    `${page}: install.md#no-such-heading: docs/install.md has no heading #no-such-heading`,
    `${page}: ../../etc/passwd: no such file in the repository`,
    `${page}: #nothing-here: docs/example.md has no heading #nothing-here`,
    `${page}: missing-too.md: no such file in the repository`,
  ]);
});

test('every relative link in README.md and docs/*.md leads to a file of the repository, and each #fragment to a heading there', () => {
  const problems: string[] = [];
  let links = 0;
  for (const page of pages()) {
    const text = readFileSync(path.join(REPO_ROOT, page), 'utf8');
    links += linkTargets(text).length;
    problems.push(...brokenLinks(REPO_ROOT, page, text));
  }
  assert.ok(links > 50, `the pages hold links to check (found ${links})`);
  assert.deepEqual(problems, []);
});

test('the README opens with the two set-up commands, which package.json runs through scripts/demo.sh and scripts/test.sh, and CI runs the same test command', () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(firstBlock !== undefined, 'the README has a shell block');
  const commands = firstBlock.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '');
  assert.deepEqual(commands, ['npm run demo', 'npm test']);
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts['demo'], 'bash scripts/demo.sh');
  assert.equal(pkg.scripts['test'], 'bash scripts/test.sh');
  for (const script of ['demo.sh', 'test.sh']) {
    assert.match(readFileSync(path.join(REPO_ROOT, 'scripts', script), 'utf8'), /^source "\$\(dirname "\$0"\)\/prepare\.sh"$/m, `scripts/${script} installs and builds through prepare.sh first`);
  }
  assert.match(readFileSync(path.join(REPO_ROOT, 'scripts', 'prepare.sh'), 'utf8'), /^cd "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/\.\."$/m, 'prepare.sh moves to the repository root, so the commands work from anywhere in the clone');
  const ciCommands = readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  assert.equal(ciCommands.at(-1), 'npm test', '.ci/run ends with the README\'s test command');
});

test('the README keeps its sections for users in order, and its reading list names every page of docs/', () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const headings = prose(readme).filter((l) => l.startsWith('## ')).map((l) => l.slice(3).trim());
  const wanted = ['Set up and run', 'Installing it on a cluster', 'Choosing a backend', 'Using the bench', 'Where to read more'];
  const order = wanted.map((h) => headings.indexOf(h));
  assert.ok(order.every((i) => i >= 0), `the README has the sections ${wanted.join(', ')} (it has ${headings.join(', ')})`);
  assert.deepEqual([...order].sort((a, b) => a - b), order, `in this order: ${wanted.join(', ')}`);
  const more = readme.slice(readme.indexOf('## Where to read more'));
  const listed = new Set(linkTargets(more).map((t) => t.replace(/#.*/, '')));
  for (const page of pages().filter((p) => p !== 'README.md')) assert.ok(listed.has(page), `"Where to read more" links ${page}`);
});
