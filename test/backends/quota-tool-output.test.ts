// The quota tools' output as the `dir` backend reads it, from text the tools printed in the test VM (XFS, ext4) and on this host (btrfs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQgroupReport } from '../../src/sys/btrfs.js';
import { parseDirectoryProject, parseProjectQuotaState, parseProjectReport } from '../../src/sys/project-quota.js';

test('xfs_io lsproj + lsattr: the project id, and the inherit flag from the flags word, not from the "projid =" line', () => {
  assert.deepEqual(parseDirectoryProject('projid = 1000001\n--------P-------- /tmp/me/v \n', '/tmp/me/v'), { projectId: 1000001, inherit: true });
  // Without the flag: the first line's letters must not be mistaken for flags (a bug the VM run caught).
  assert.deepEqual(parseDirectoryProject('projid = 0\n----------------- /tmp/me/v \n', '/tmp/me/v'), { projectId: 0, inherit: false });
  assert.throws(() => parseDirectoryProject('', '/x'), /no project id/);
});

test('xfs_quota state -p: enforcement on, accounting only, and the empty answer of a filesystem without project quotas', () => {
  const on = 'Project quota state on /tmp/mx (/dev/loop0)\n  Accounting: ON\n  Enforcement: ON\n  Inode: #131 (1 blocks, 1 extents)\n';
  const accounting = 'Project quota state on /tmp/me (/dev/loop0)\n  Accounting: ON\n  Enforcement: OFF\n';
  assert.deepEqual(parseProjectQuotaState(on), { accounting: true, enforcing: true });
  assert.deepEqual(parseProjectQuotaState(accounting), { accounting: true, enforcing: false });
  assert.deepEqual(parseProjectQuotaState(''), { accounting: false, enforcing: false });
});

test('xfs_quota report -p -b -N -n: KiB figures by project id, a removed limit as 0', () => {
  const r = parseProjectReport('#1000001          1024          0      65536     00 [--------]\n#1000002          1025          0          0     00 [--------]\n\n');
  assert.deepEqual(r.get(1000001), { usedBytes: 1024 * 1024, hardLimitBytes: 64 * 1024 * 1024 });
  assert.deepEqual(r.get(1000002), { usedBytes: 1025 * 1024, hardLimitBytes: 0 });
  assert.equal(parseProjectReport('\n').size, 0);
});

test('btrfs qgroup show --raw -re -p: qgroups of both levels with "none" for no limit and their parents, header lines ignored', () => {
  const r = parseQgroupReport([
    'Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive Parent     Path ',
    '--------    ----------    ---------  --------------  ------------- ------     ---- ',
    '0/5              16384        16384            none           none -          <toplevel>',
    '0/256         67092480     67092480        67108864           none 1/256      pool/volumes/v1',
    '0/257             4096         4096            8192           4096 1/256,1/300 pool/volumes/v1/nested',
    '1/256         67096576     67096576        67108864           none -          <0 member qgroups>',
  ].join('\n'));
  assert.deepEqual(r.get('0/5'), { referencedBytes: 16384, exclusiveBytes: 16384, limitBytes: undefined, exclusiveLimitBytes: undefined, parents: [] });
  assert.deepEqual(r.get('0/256'), { referencedBytes: 67092480, exclusiveBytes: 67092480, limitBytes: 67108864, exclusiveLimitBytes: undefined, parents: ['1/256'] });
  assert.deepEqual(r.get('0/257'), { referencedBytes: 4096, exclusiveBytes: 4096, limitBytes: 8192, exclusiveLimitBytes: 4096, parents: ['1/256', '1/300'] });
  assert.deepEqual(r.get('1/256'), { referencedBytes: 67096576, exclusiveBytes: 67096576, limitBytes: 67108864, exclusiveLimitBytes: undefined, parents: [] });
  assert.equal(r.size, 4);
});
