#!/usr/bin/env bash
# Sourced: debian_mirror prints the Debian mirror this machine's apt already uses (deb822 sources
# first, then sources.list), so that other suites and debootstrap come from the same place.
debian_mirror() {
  local mirror
  mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 ~ /^[a-z]+$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  if [ -z "$mirror" ]; then
    echo "no Debian mirror in this machine's apt sources" >&2
    return 1
  fi
  echo "$mirror"
}
