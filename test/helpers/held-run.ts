// Test support: a `lode bench SCENARIO --api --hold` process, resolved once it holds its cluster, with the kubeconfig and API URL it prints.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The compiled CLI (dist/src/cli/main.js), found from this compiled file (dist/test/helpers). */
const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface HeldRun {
  child: ChildProcess;
  /** Its exit code once it has ended (SIGINT ends the hold and cleans up, exit 0). */
  exited: Promise<number | null>;
  kubeconfig: string;
  url: string;
}

/** Starts `lode bench SCENARIO --api 127.0.0.1:0 --hold` in `workDir` and resolves once it holds; an early exit rejects with its stderr. */
export async function holdRun(scenario: string, workDir: string): Promise<HeldRun> {
  const c = spawn(process.execPath, [MAIN, 'bench', scenario, '--api', '127.0.0.1:0', '--hold', '--work-dir', workDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => c.on('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    c.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    c.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); if (stderr.includes('holding the cluster')) resolve(); });
    c.on('exit', (code) => reject(new Error(`bench exited early (${code}): ${stderr}`)));
  });
  const kubeconfig = /kubeconfig (\S+) \(export/.exec(stdout)?.[1] ?? '';
  assert.ok(existsSync(kubeconfig), `the held run names its kubeconfig: ${stdout}`);
  return { child: c, exited, kubeconfig, url: /API at (\S+);/.exec(stdout)?.[1] ?? '' };
}
