#!/usr/bin/env bash
# `npm run demo`: the cluster bench's default scenario - three simulated nodes, each with a real lode driver.
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode demo needs root: each simulated node runs a real lode driver that attaches loop devices and mounts filesystems (run: sudo npm run demo)" >&2
  exit 1
fi
exec node dist/src/cli/main.js demo "$@"
