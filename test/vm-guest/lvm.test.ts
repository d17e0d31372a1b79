// Device-mapper and LVM in the VM's Debian kernel: a volume group on a loop device with a thick volume,
// a thin pool and an overprovisioned thin volume, formatted and mounted, as the LVM backend will use them.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { defer, guestOnly, MiB, scratchDir, scratchLoop, scratchMount, sh } from './support.js';

// No udev in the VM (as in a container): LVM must create device nodes itself and not wait for udev;
// backups would land in the read-only /etc.
const LVM_CONF = 'activation { udev_sync = 0 udev_rules = 0 }\nbackup { backup = 0 archive = 0 }\n';

interface LvRow {
  lv_name: string;
  lv_attr: string;
  lv_size: string;
  pool_lv: string;
  data_percent: string;
}

async function lvmEnv(t: TestContext): Promise<NodeJS.ProcessEnv> {
  const dir = await scratchDir(t, 'lvm-conf');
  await writeFile(path.join(dir, 'lvm.conf'), LVM_CONF);
  return { ...process.env, LVM_SYSTEM_DIR: dir, LC_ALL: 'C' };
}

async function lvs(env: NodeJS.ProcessEnv, vg: string): Promise<Map<string, LvRow>> {
  const out = JSON.parse(await sh('lvs', ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o', 'lv_name,lv_attr,lv_size,pool_lv,data_percent', vg], env)) as {
    report: Array<{ lv: LvRow[] }>;
  };
  return new Map(out.report[0]?.lv.map((r) => [r.lv_name, r]) ?? []);
}

test('LVM on a loop device: thick volume, thin pool, overprovisioned thin volume; ext4 on both volumes mounts and keeps data', { skip: guestOnly }, async (t) => {
  const env = await lvmEnv(t);
  const device = await scratchLoop(t, 1024);
  const vg = 'lodevmtest';
  await sh('pvcreate', ['-q', device], env);
  await sh('vgcreate', ['-q', vg, device], env);
  // Removed before the loop device is detached (cleanups run newest first).
  defer(t, async () => {
    await sh('vgremove', ['-q', '-f', vg], env);
    await sh('pvremove', ['-q', device], env);
  });

  await sh('lvcreate', ['-q', '-y', '-L', '64m', '-n', 'thick', vg], env);
  await sh('lvcreate', ['-q', '-y', '-L', '256m', '-T', `${vg}/pool`], env);
  // Twice the pool's size: thin volumes promise more than the pool holds.
  await sh('lvcreate', ['-q', '-y', '-V', '512m', '-T', `${vg}/pool`, '-n', 'thin'], env);

  const rows = await lvs(env, vg);
  assert.equal(rows.get('thick')?.lv_attr[0], '-', 'thick is a plain linear volume');
  assert.equal(Number(rows.get('thick')?.lv_size), 64 * MiB);
  assert.equal(rows.get('pool')?.lv_attr[0], 't', 'pool is a thin pool');
  assert.equal(Number(rows.get('pool')?.lv_size), 256 * MiB);
  assert.equal(rows.get('thin')?.lv_attr[0], 'V', 'thin is a thin volume');
  assert.equal(rows.get('thin')?.pool_lv, 'pool');
  assert.equal(Number(rows.get('thin')?.lv_size), 512 * MiB);

  for (const lv of ['thick', 'thin']) {
    const dev = `/dev/${vg}/${lv}`;
    await sh('mkfs.ext4', ['-q', dev]);
    const mnt = await scratchMount(t, dev, 'ext4', []);
    await writeFile(path.join(mnt, 'hello'), `written on ${lv}`);
    await sh('umount', [mnt]);
    await sh('mount', ['-t', 'ext4', dev, mnt]);
    assert.equal(await readFile(path.join(mnt, 'hello'), 'utf8'), `written on ${lv}`);
  }
  // The thin volume's data now occupies part of the pool, which lvs reports.
  assert.ok(Number((await lvs(env, vg)).get('pool')?.data_percent) > 0);
});
