#!/usr/bin/env bash
# `npm test`: builds, then runs every test file with node's test runner, one file at a time
# (the tests attach loop devices and mount filesystems, which needs root; some run in a VM).
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode tests need root: they attach loop devices and mount filesystems (run: sudo npm test)" >&2
  exit 1
fi
if [ $# -gt 0 ]; then
  exec node --test --test-concurrency=1 "$@"
fi
# Every test file except the guest tests, which only make sense inside the test VM: the host tests in
# dist/test/vm/ boot it and run them there.
mapfile -t files < <(find dist/test -path dist/test/vm-guest -prune -o -name '*.test.js' -print | sort)
exec node --test --test-concurrency=1 "${files[@]}"
