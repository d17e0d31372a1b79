#!/usr/bin/env bash
# `npm run bench`: the driver benchmarks, then the cluster-bench scale run; figures go to stdout.
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode benchmarks need root: they attach loop devices and mount filesystems (run: sudo npm run bench)" >&2
  exit 1
fi
node dist/bench/driver-bench.js
echo
node dist/bench/cluster-bench.js "$@"
