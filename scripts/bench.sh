#!/usr/bin/env bash
# `npm run bench`: the driver benchmarks, the driver's memory with API access, its API requests per idle minute, the snapshot benchmark, the data-path (fio) benchmark, the planner (lode plan) at 10,000 pods, then the cluster-bench scale run; figures go to stdout.
# `npm run bench -- --data-path-only [--repeats N --runtime S]` runs the data-path benchmark alone.
LODE_PREPARE_FOR=bench
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode benchmarks need root: they attach loop devices and mount filesystems (run: sudo npm run bench)" >&2
  exit 1
fi
if [ "${1:-}" = --data-path-only ]; then
  shift
  exec node dist/benchmarks/data-path-bench.js "$@"
fi
node dist/benchmarks/driver-bench.js
echo
node dist/benchmarks/api-memory-bench.js
echo
node dist/benchmarks/api-idle-bench.js
echo
node dist/benchmarks/snapshot-bench.js
echo
node dist/benchmarks/data-path-bench.js
echo
node dist/benchmarks/plan-bench.js
echo
node dist/benchmarks/cluster-bench.js "$@"
