// Builds the VM's initramfs at test time: a static busybox, the kernel modules that reach the host root
// over 9p, and an init that mounts it (and any directory it would hide) read-only and hands over to the
// job script on the writable share.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { cpioArchive, type CpioEntry } from './cpio.js';
import type { ExtraShare } from './checkout-shares.js';
import { shellQuote } from './shell-quote.js';

/** 9p tags that the qemu command line and the init below agree on. */
export const HOST_ROOT_TAG = 'hostroot';
export const JOB_TAG = 'lodejob';
/** Where the writable share appears inside the guest (on the guest's tmpfs /tmp). */
export const GUEST_JOB_DIR = '/tmp/lode-vm';
export const GUEST_JOB_SCRIPT = `${GUEST_JOB_DIR}/job.sh`;
/** Printed on the console by init when something before the job script fails. */
export const BOOT_FAILED_MARKER = '@@lode-vm boot-failed';

// Debian builds virtio and 9p as modules; nothing before the host root is mounted can load them
// from disk, so they travel in the initramfs.
const EARLY_MODULES = ['virtio_pci', '9pnet_virtio', '9p'];

/** The module files for `names` and everything they depend on, dependencies first. */
export function moduleClosure(modulesDir: string, names: readonly string[]): string[] {
  const deps = new Map<string, string[]>();
  for (const line of readFileSync(path.join(modulesDir, 'modules.dep'), 'utf8').split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    deps.set(line.slice(0, colon), line.slice(colon + 1).trim().split(/\s+/).filter(Boolean));
  }
  const byName = new Map<string, string>();
  for (const file of deps.keys()) byName.set(path.basename(file).replace(/\.ko(\.\w+)?$/, '').replace(/-/g, '_'), file);
  const ordered: string[] = [];
  const visit = (file: string): void => {
    if (ordered.includes(file)) return;
    for (const d of deps.get(file) ?? []) visit(d);
    ordered.push(file);
  };
  for (const n of names) {
    const file = byName.get(n.replace(/-/g, '_'));
    // Absent from modules.dep means built into this kernel: nothing to load.
    if (file) visit(file);
  }
  return ordered;
}

// busybox's insmod takes only plain objects; newer Debian kernels ship their modules compressed.
function moduleObject(file: string): Buffer {
  const tool = file.endsWith('.ko.xz') ? 'xz' : file.endsWith('.ko.zst') ? 'zstd' : file.endsWith('.ko.gz') ? 'gzip' : undefined;
  if (!tool) return readFileSync(file);
  return execFileSync(tool, ['-dc', file], { maxBuffer: 64 * 1024 * 1024 });
}

function initScript(moduleNames: readonly string[], shares: readonly ExtraShare[]): string {
  const bb = '/bin/busybox';
  const opts = 'trans=virtio,version=9p2000.L,msize=512000';
  const fail = (why: string): string => `{ echo "${BOOT_FAILED_MARKER}: ${why}@@"; ${bb} poweroff -f; }`;
  return [
    `#!${bb} sh`,
    `${bb} mount -t proc proc /proc`,
    `${bb} mount -t devtmpfs devtmpfs /dev`,
    ...moduleNames.map((m) => `${bb} insmod /modules/${m} || ${fail(`insmod ${m} failed`)}`),
    // cache=loose: the host root does not change while a test runs, and it halves node's start-up.
    `${bb} mount -t 9p -o ${opts},ro,cache=loose ${HOST_ROOT_TAG} /root || ${fail('cannot mount the host root over virtio-9p')}`,
    `${bb} mount -t tmpfs -o mode=1777 tmpfs /root/tmp || ${fail('cannot mount tmpfs on /tmp')}`,
    `${bb} mount -t tmpfs -o mode=0755 tmpfs /root/run || ${fail('cannot mount tmpfs on /run')}`,
    // A checkout (or anything else the tests read) under /tmp or /run, hidden by the tmpfs above.
    ...shares.map((s) => {
      const at = shellQuote(`/root${s.dir}`);
      return `${bb} mkdir -p ${at} && ${bb} mount -t 9p -o ${opts},ro,cache=loose ${s.tag} ${at} || ${fail(`cannot mount ${s.dir.replace(/["$`\\@]/g, '')} over virtio-9p`)}`;
    }),
    `${bb} mount -t proc proc /root/proc && ${bb} mount -t sysfs sysfs /root/sys && ${bb} mount -t devtmpfs devtmpfs /root/dev || ${fail('cannot mount /proc, /sys or /dev')}`,
    `${bb} mkdir -p /root${GUEST_JOB_DIR} && ${bb} mount -t 9p -o ${opts} ${JOB_TAG} /root${GUEST_JOB_DIR} || ${fail('cannot mount the job share')}`,
    `${bb} umount /proc /dev`,
    // switch_root, not chroot: the kernel runs modprobe for request_module() in PID 1's root, so that
    // root must be the host's, where /lib/modules is.
    `exec ${bb} switch_root /root /bin/sh ${GUEST_JOB_SCRIPT}`,
    fail('switch_root to the host root failed'),
    '',
  ].join('\n');
}

export function buildInitramfs(busybox: string, modulesDir: string, shares: readonly ExtraShare[] = []): Buffer {
  const modules = moduleClosure(modulesDir, EARLY_MODULES);
  const names = modules.map((m, i) => `${String(i).padStart(2, '0')}-${path.basename(m).replace(/\.ko\.\w+$/, '.ko')}`);
  const entries: CpioEntry[] = [
    ...['bin', 'dev', 'proc', 'sys', 'root', 'tmp', 'modules'].map((d): CpioEntry => ({ name: d, kind: 'dir', mode: 0o755 })),
    { name: 'bin/busybox', kind: 'file', mode: 0o755, data: readFileSync(busybox) },
    { name: 'init', kind: 'file', mode: 0o755, data: Buffer.from(initScript(names, shares)) },
    ...modules.map((m, i): CpioEntry => ({ name: `modules/${names[i]}`, kind: 'file', mode: 0o644, data: moduleObject(path.join(modulesDir, m)) })),
  ];
  return cpioArchive(entries);
}
