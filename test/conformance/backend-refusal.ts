// Whether this build of the driver serves a backend at all, asked of a real driver process at run time.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { skipUnlessRequired } from '../helpers/prerequisites.js';

/**
 * Starts the driver once with a pool of `backend` on a plain directory. A refusal of the backend
 * itself (not built, not a known name) is returned as the reason to skip; any other outcome,
 * including a refusal of this directory's filesystem, means the backend exists and its
 * conformance cases must run. Under CI=true a refusal throws instead, failing every case.
 */
export async function backendRefusal(backend: string): Promise<string | undefined> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-probe-'));
  try {
    const h = await DriverHarness.start({ pools: [{ name: 'probe', dir, extra: `backend=${backend}` }] });
    await h.cleanup();
    return undefined;
  } catch (err) {
    const message = (err as Error).message;
    const refusal = new RegExp(`backend "?${backend}"? is not (built|supported)[^"\\n]*`).exec(message);
    // Every build CI tests serves every backend: there a refusal fails the conformance file.
    return refusal ? skipUnlessRequired(`the driver refuses backend=${backend}: ${refusal[0]}`) : undefined;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
