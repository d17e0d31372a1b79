#!/usr/bin/env bash
# Shared set-up for the demo, the tests and the benchmarks: system tools, npm packages, a fresh build.
# Sourced, not run: callers do `source scripts/prepare.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debian packages that provide the tools the driver calls.
need_pkgs=()
command -v losetup >/dev/null || need_pkgs+=(util-linux)
command -v mkfs.ext4 >/dev/null || need_pkgs+=(e2fsprogs)
command -v mkfs.xfs >/dev/null || need_pkgs+=(xfsprogs)
command -v btrfs >/dev/null || need_pkgs+=(btrfs-progs)
command -v fallocate >/dev/null || need_pkgs+=(util-linux)
command -v mount >/dev/null || need_pkgs+=(mount)
# Only the data-path benchmark runs fio; tests and the demo do without it.
if [ "${LODE_PREPARE_FOR:-}" = bench ]; then
  command -v fio >/dev/null || need_pkgs+=(fio)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "lode: missing system packages: ${need_pkgs[*]} (install them as root: apt-get install ${need_pkgs[*]})" >&2
    exit 1
  fi
  echo "lode: installing ${need_pkgs[*]} ..." >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "lode: installing npm packages ..." >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
npm run --silent build >&2
source scripts/csi-tools.sh
