// Renders the shell script the guest runs once the host root is mounted: load modules, run each test
// file with node --test, and print markers on the console that tell the host how far it got.
import { GUEST_JOB_DIR } from './initramfs.js';
import { shellQuote } from './shell-quote.js';
import { slowdownProbe } from './slowdown.js';

export const MARK = {
  userspace: '@@lode-vm userspace@@',
  done: '@@lode-vm done@@',
  start: (n: number): string => `@@lode-vm start ${n}@@`,
  /** Matches the end marker of file `n`; group 1 is node --test's exit code. */
  end: (n: number): RegExp => new RegExp(`@@lode-vm end ${n} rc=(\\d+)@@`),
};

export const GUEST_RESULTS_DIR = `${GUEST_JOB_DIR}/results`;

export { shellQuote };

export interface JobSpec {
  files: readonly string[];
  cwd: string;
  reporter: string;
  modules: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Each file's bound at the reference speed; the guest stretches it by the slowdown it measures. */
  fileTimeoutSeconds: number;
}

export function jobScript(spec: JobSpec): string {
  const env = Object.entries(spec.env).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
  return [
    '#!/bin/sh',
    'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LC_ALL=C NO_COLOR=1',
    ...env,
    `echo ${shellQuote(MARK.userspace)}`,
    // One modprobe for all: each process start costs a visible fraction of a second under emulation.
    ...(spec.modules.length > 0 ? [`modprobe -a ${spec.modules.map(shellQuote).join(' ')} || echo "lode-vm: modprobe failed"`] : []),
    // After the modules, so the loop is timed with the boot's work done.
    ...slowdownProbe(),
    `file_timeout=$(( ${spec.fileTimeoutSeconds} * lode_permille / 1000 ))`,
    // The kernel starts with loopback down; tests that serve HTTP on 127.0.0.1 (metrics) need it.
    'ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null || echo "lode-vm: cannot bring up loopback"',
    `mkdir -p ${GUEST_RESULTS_DIR}`,
    `cd ${shellQuote(spec.cwd)} || echo "lode-vm: cannot enter ${spec.cwd.replace(/["$`\\]/g, '')}"`,
    'run_file() {',
    '  n=$1; f=$2',
    '  echo "@@lode-vm start $n@@"',
    // The guest bounds each file itself, so one that hangs does not cost the files after it.
    '  timeout -k 10 "$file_timeout" node --test --test-concurrency=1 \\',
    '    --test-reporter=spec --test-reporter-destination=stdout \\',
    `    --test-reporter=${shellQuote(spec.reporter)} --test-reporter-destination=${GUEST_RESULTS_DIR}/$n.jsonl "$f"`,
    '  echo "@@lode-vm end $n rc=$?@@"',
    '}',
    ...spec.files.map((f, i) => `run_file ${i} ${shellQuote(f)}`),
    'sync',
    `echo ${shellQuote(MARK.done)}`,
    // Power off without an init system; if this shell dies instead, the kernel panics and qemu,
    // started with -no-reboot and panic=-1, exits as well.
    'echo o > /proc/sysrq-trigger',
    'sleep 60',
    '',
  ].join('\n');
}
