// `node dist/test/vm/run.js [FILE...]` (or `npm run test:vm -- FILE...`): runs guest test files in one VM
// boot and reports them as node:test results; without FILE, every file in dist/test/vm-guest/.
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vmTestFiles } from './host-suite.js';

const distTest = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const repo = path.resolve(distTest, '../..');

/** Every top-level guest file; subfolders (the harness's own deliberate failures) are run by name only. */
export function defaultGuestFiles(): string[] {
  const dir = path.join(distTest, 'vm-guest');
  return readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join(dir, f));
}

// Lets a developer name the TypeScript source; the guest runs the compiled file.
function compiled(arg: string): string {
  const abs = path.resolve(arg);
  const rel = path.relative(repo, abs);
  if (rel.startsWith(`test${path.sep}`) && rel.endsWith('.ts')) return path.join(repo, 'dist', rel.replace(/\.ts$/, '.js'));
  return abs;
}

// Under `node --test` this file is only a module next to the tests; it boots nothing there.
if (process.env.NODE_TEST_CONTEXT === undefined && process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.length > 2 ? process.argv.slice(2).map(compiled) : defaultGuestFiles();
  const absent = files.filter((f) => !existsSync(f));
  if (absent.length > 0) {
    console.error(`no such file: ${absent.join(', ')} (build first: npm run build)`);
    process.exit(2);
  }
  vmTestFiles(files, { cwd: repo });
}
