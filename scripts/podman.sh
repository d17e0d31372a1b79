#!/usr/bin/env bash
# Sourced by the image scripts: podman reads its settings from scripts/containers.conf alone.
PODMAN_RUNTIME=/usr/sbin/runc
export CONTAINERS_CONF
CONTAINERS_CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf"
