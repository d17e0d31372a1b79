// The versions a re-enacted sidecar names: the image tags deploy/base/daemonset.yaml ships.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { shippedVersion } from '../../src/bench/sidecars/components.js';
import { DAEMONSET_PATH } from '../../src/bench/sidecars/daemonset-args.js';

describe('shippedVersion', () => {
  it('names the tag of the DaemonSet\'s container, every time it is asked; unknown for a container it does not have', () => {
    const ds = parseYaml(readFileSync(DAEMONSET_PATH, 'utf8')) as { spec: { template: { spec: { containers: { name: string; image: string }[] } } } };
    const image = ds.spec.template.spec.containers.find((c) => c.name === 'csi-provisioner')!.image;
    const tag = image.split('/').pop()!;
    assert.match(tag, /^csi-provisioner:v\d/);
    for (let i = 0; i < 2; i++) assert.equal(shippedVersion('csi-provisioner'), `models ${tag} (deploy/base/daemonset.yaml)`);
    assert.notEqual(shippedVersion('csi-snapshotter'), shippedVersion('csi-provisioner'));
    assert.equal(shippedVersion('no-such-container'), 'unknown');
  });
});
