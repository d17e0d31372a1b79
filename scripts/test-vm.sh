#!/usr/bin/env bash
# `npm run test:vm -- FILE...`: builds, then runs guest test files (test/vm-guest/*.test.ts or their
# compiled .js) in one boot of the test VM; without FILE, all of them.
source "$(dirname "$0")/prepare.sh"
exec node dist/test/vm/run.js "$@"
