// One-off differential runs outside the test's slice: each named scenario re-enacted, then with real sidecars, printing both wall times, real sidecar exits and the outcome differences.
import { runBuiltIn } from './run-helpers.js';
import { differences, outcome } from './run-outcome.js';

// Usage (root, the test environment's tools in ../shared/tools/csi): node dist/test/bench/differential-run.js FILE...
// FILE as under scenarios/, e.g. 09-driver-restart/scenario.yaml. Node names are compared exactly here.
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node dist/test/bench/differential-run.js SCENARIO-FILE... (paths under scenarios/)');
  process.exit(2);
}
for (const file of files) {
  let t = Date.now();
  const reenacted = await runBuiltIn(file);
  const reenactedMs = Date.now() - t;
  t = Date.now();
  const real = await runBuiltIn(file, undefined, { sidecars: 'real' });
  const realMs = Date.now() - t;
  console.log(JSON.stringify({ file, reenactedMs, realMs, sidecarExits: real.sidecarExits, sidecarExitsWithDriver: real.sidecarExitsWithDriver, differences: differences(outcome(reenacted), outcome(real)) }));
}
