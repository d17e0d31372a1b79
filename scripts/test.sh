#!/usr/bin/env bash
# `npm test`: builds, then runs every test file with node's test runner, one file at a time
# (the tests attach loop devices and mount filesystems, which needs root).
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode tests need root: they attach loop devices and mount filesystems (run: sudo npm test)" >&2
  exit 1
fi
exec node --test --test-concurrency=1 "${@:-dist/test/}"
