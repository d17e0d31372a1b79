// Where --sidecars real finds its binaries: LODE_CSI_TOOLS naming a directory of ready binaries is used as it is, without unpacking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { SIDECAR_TOOLS } from '../helpers/csi-tools.js';

test('a directory of ready binaries in LODE_CSI_TOOLS is taken as it is, and a missing one is named', async () => {
  const dir = mkdtempSync('/tmp/lode-ready-tools-');
  try {
    for (const name of SIDECAR_TOOLS) writeFileSync(path.join(dir, name), '#!/bin/sh\necho "$0 v0.0.1"\n', { mode: 0o755 });
    process.env.LODE_CSI_TOOLS = dir;
    // Imported after the variable is set: the module reads it at the first call, once per process.
    const { csiBinaries, binaryVersion } = await import('../../src/bench/sidecars/csi-tools.js');
    const found = await csiBinaries(SIDECAR_TOOLS);
    for (const name of SIDECAR_TOOLS) assert.equal(found[name], path.join(dir, name));
    assert.equal(await binaryVersion(found['csi-provisioner']), 'v0.0.1');
    rmSync(path.join(dir, 'snapshot-controller'));
    await assert.rejects(csiBinaries(SIDECAR_TOOLS), /snapshot-controller missing from the unpacked kubernetes-csi tools/);
  } finally {
    delete process.env.LODE_CSI_TOOLS;
    rmSync(dir, { recursive: true, force: true });
  }
});
