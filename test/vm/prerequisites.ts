// Finds what booting the test VM needs on this host (qemu, a Debian kernel with its modules, a static
// busybox) and, when something is missing, says which Debian package provides it.
import { accessSync, constants, closeSync, openSync, readSync, readdirSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { which } from '../helpers/prerequisites.js';

export { which };

export interface Tool {
  command: string;
  /** The Debian package that provides it. */
  pkg: string;
}

export interface VmHost {
  qemu: string;
  kernel: string;
  /** `uname -r` of that kernel: the name of its directory under /lib/modules. */
  kernelVersion: string;
  modulesDir: string;
  busybox: string;
}

export type Prerequisites = { ok: true; host: VmHost } | { ok: false; missing: string[]; install: string[] };

// A busybox with a program interpreter needs the C library, which the initramfs does not carry.
function isStaticElf(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(64);
    readSync(fd, head, 0, 64, 0);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2) return false;
    const phoff = Number(head.readBigUInt64LE(32));
    const phentsize = head.readUInt16LE(54);
    const phnum = head.readUInt16LE(56);
    const ph = Buffer.alloc(phentsize * phnum);
    readSync(fd, ph, 0, ph.length, phoff);
    for (let i = 0; i < phnum; i++) if (ph.readUInt32LE(i * phentsize) === 3 /* PT_INTERP */) return false;
    return true;
  } finally {
    closeSync(fd);
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

// The newest /boot/vmlinuz-VER whose modules are installed; LODE_VM_KERNEL names another one.
function findKernel(): { kernel: string; version: string } | undefined {
  const forced = process.env.LODE_VM_KERNEL;
  const candidates = forced
    ? [forced]
    : (existsSync('/boot') ? readdirSync('/boot') : [])
        .filter((f) => f.startsWith('vmlinuz-'))
        .map((f) => path.join('/boot', f));
  const usable = candidates
    .map((kernel) => ({ kernel, version: path.basename(kernel).replace(/^vmlinuz-/, '') }))
    .filter((k) => readable(k.kernel) && existsSync(path.join('/lib/modules', k.version, 'modules.dep')))
    .sort((a, b) => compareVersions(b.version, a.version));
  return usable[0];
}

/** What the VM needs, plus `tools` that the guest tests run (the guest sees this host's root). */
export function checkPrerequisites(tools: readonly Tool[] = []): Prerequisites {
  const missing: string[] = [];
  const install = new Set<string>();
  const qemu = which('qemu-system-x86_64');
  if (!qemu) {
    missing.push('qemu-system-x86_64');
    install.add('qemu-system-x86');
  }
  const kernel = findKernel();
  if (!kernel) {
    missing.push('a readable Debian kernel /boot/vmlinuz-VERSION with its modules in /lib/modules/VERSION');
    install.add('linux-image-amd64');
  }
  const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((p) => existsSync(p) && isStaticElf(p));
  if (!busybox) {
    missing.push('a statically linked busybox');
    install.add('busybox-static');
  }
  for (const t of tools) {
    if (!which(t.command)) {
      missing.push(t.command);
      install.add(t.pkg);
    }
  }
  if (missing.length > 0 || !qemu || !kernel || !busybox) return { ok: false, missing, install: [...install] };
  return {
    ok: true,
    host: { qemu, kernel: kernel.kernel, kernelVersion: kernel.version, modulesDir: path.join('/lib/modules', kernel.version), busybox },
  };
}

export function describeMissing(p: { missing: string[]; install: string[] }): string {
  return `the VM tests need ${p.missing.join(', ')}: install with \`apt-get install -y ${p.install.join(' ')}\``;
}
