// Backend conformance of loop pools: image files behind loop devices, ext4 and xfs.
import { runConformance } from './suite.js';
import { loopFixture } from './fixtures.js';

runConformance(loopFixture);
