# syntax=docker/dockerfile:1
# The Lode node driver image: compile in a build stage, run on slim Debian with the block
# and filesystem tools the driver calls, and nothing that can build or install code.
#
# Base images are written out in every FROM (no ARG) so image scanners and update bots see
# the pinned tag. Node 24 is the LTS line (Node 20 reached its end of life on 2026-04-30);
# move all three stages together. The code itself still runs on Node 20 ("engines": ">=20"),
# which is what the test machines have.

# --- build: full dev dependencies, proto generation, tsc, the driver's bundle ---
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency runs code at install time.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY proto ./proto
COPY src ./src
# The build compiles the contract's codec ahead of time and bundles the driver's modules into one
# file, which `lode driver` loads.
COPY scripts/gen-codec.mjs scripts/bundle-driver.mjs ./scripts/
# Only src/ is in the context (see .dockerignore), so this compiles the program, not the tests.
RUN npm run build

# --- deps: production dependencies only ---
FROM node:24.21.0-bookworm-slim AS deps
WORKDIR /src
COPY package.json package-lock.json ./
# Source maps and type declarations are for debuggers and compilers, never loaded at run time: half
# of node_modules (most of it the API client's generated code).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

# --- runtime ---
FROM node:24.21.0-bookworm-slim AS runtime
# What the driver runs: losetup, mount/umount, blkid, findmnt, fallocate (util-linux, mount),
# mkfs.ext4/resize2fs/e2fsck (e2fsprogs), mkfs.xfs/xfs_growfs, and xfs_quota/xfs_io for dir
# pools' project quotas on XFS and ext4 (xfsprogs), btrfs for dir pools on btrfs (btrfs-progs),
# vgs/lvs/lvcreate/lvextend/lvremove for lvm pools (lvm2) and thin_check, which LVM runs when it
# activates a thin pool (thin-provisioning-tools); tini is PID 1.
# npm, npx, corepack and yarn come with the base image; the driver never needs them, so they go.
RUN apt-get update \
 && apt-get install -y --no-install-recommends util-linux mount e2fsprogs xfsprogs btrfs-progs lvm2 thin-provisioning-tools tini \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
 && rm -f /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /app
ENV NODE_ENV=production
# The driver's V8 memory flags (src/util/driver-node-flags.ts DRIVER_NODE_FLAGS; a test keeps the
# two equal). In the environment rather than on the entrypoint's command line, so they hold
# for every node process in the container, whatever command starts it.
ENV NODE_OPTIONS="--max-semi-space-size=1 --max-old-space-size=256"
# package.json carries "type": "module", which the compiled ESM files need, and the version the
# driver reports. The driver's CSI codec is compiled into dist/src/gen at build time; proto/ is
# still read at run time by the bench's kubelet plugin registration (pluginregistration.proto).
COPY package.json ./
COPY proto ./proto
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
# The OCI labels registries and scanners read, last so that a new version rebuilds no layer above.
# The version is package.json's, the one `lode --version` prints from /app/package.json:
# scripts/image.sh passes it; a plain build passes --build-arg LODE_VERSION=<that version>.
ARG LODE_VERSION
LABEL org.opencontainers.image.title="lode" \
      org.opencontainers.image.description="Lode node driver: node-local storage for Kubernetes (CSI)" \
      org.opencontainers.image.source="https://github.com/lode-csi/lode" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${LODE_VERSION}"
# Runs as root: attaching loop devices and mounting need it (the pod is privileged anyway).
# tini as PID 1: the kernel gives PID 1 no default signal handling, and orphaned children
# (a mount helper, a killed mkfs) would stay zombies; tini forwards SIGTERM to the driver
# and reaps them.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/src/cli/main.js", "driver"]
