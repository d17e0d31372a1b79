// The bench's data annotations: the written file can be rebuilt by any reader, and a copy that differs anywhere is caught, with where.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_FILE, verifyData, writeData } from '../../src/bench/controllers/volume-data.js';
import { parseExpectations, parseWrites } from '../../src/bench/api/data-annotations.js';

describe('volume data', () => {
  it('a reader finds the writer\'s bytes, and a single flipped byte, a short file or another writer\'s data are mismatches', async () => {
    const dir = mkdtempSync('/tmp/lode-bench-data-');
    try {
      const [w] = parseWrites('data=64Ki');
      assert.deepEqual(w, { volume: 'data', bytes: 65536 });
      await writeData(dir, 'default/db-0', w!);
      const [e] = parseExpectations('restored=db-0/data:64Ki', 'default');
      assert.deepEqual(e, { volume: 'restored', writer: 'default/db-0', writerVolume: 'data', bytes: 65536 });
      assert.equal((await verifyData(dir, e!))[0], true);
      const file = join(dir, DATA_FILE);
      const bytes = readFileSync(file);
      bytes[40_000] = bytes[40_000]! ^ 1;
      writeFileSync(file, bytes);
      assert.deepEqual(await verifyData(dir, e!), [false, 'volume "restored": differs from what default/db-0 wrote into "data" from byte 40000 on']);
      writeFileSync(file, bytes.subarray(0, 4096));
      assert.match((await verifyData(dir, e!))[1], /4096 bytes, but default\/db-0 wrote 65536/);
      await writeData(dir, 'default/db-1', w!);
      assert.equal((await verifyData(dir, e!))[0], false, 'another pod\'s data is not db-0\'s');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
