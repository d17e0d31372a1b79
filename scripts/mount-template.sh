#!/usr/bin/env bash
# Sourced by scripts/test.sh: the clean mount namespace that the simulated nodes of every bench
# in the tests copy their own from (src/bench/nodes/mount-template.ts), made before any test mounts.
# A node's namespace copied from the host's table instead would hold the loop-backed filesystems of
# the test files running beside its bench, and keep them (and their devices' detach) alive after
# their owners unmount them.

# Starts the template and exports its holder's pid as LODE_BENCH_MOUNT_TEMPLATE.
start_mount_template() {
  # A child of this shell with a parent-death signal: it ends with the shell, or with the test
  # runner the shell execs into (no EXIT trap runs then). Not a job of the shell: its end is no news.
  setpriv --pdeathsig KILL -- unshare --mount --propagation private -- sleep infinity &
  local pid=$! i
  disown "$pid" 2>/dev/null || true
  # unshare sets the namespace up, then execs sleep: the name says when it is done.
  for i in $(seq 200); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = sleep ] && break
    if ! kill -0 "$pid" 2>/dev/null || [ "$i" = 200 ]; then
      echo "lode tests: could not make the bench's mount template (unshare --mount --propagation private)" >&2
      kill -KILL "$pid" 2>/dev/null || true
      return 1
    fi
    sleep 0.05
  done
  # Loop-device mounts already on the machine are someone else's (another engineer's run, a bench
  # left running): dropped from the template, deepest first, but one holding the checkout or the
  # temporary directory, where the tests' work dirs are (a bench whose work dir the template does
  # not show makes its own template and says so).
  local keep=("$PWD" "${TMPDIR:-/tmp}") target source k holds drop=()
  while read -r target source; do
    case "$source" in /dev/loop*) ;; *) continue ;; esac
    target=$(printf '%b' "$target")
    holds=0
    for k in "${keep[@]}"; do
      if [ "$target" = / ] || [ "$k" = "$target" ] || [[ "$k" == "$target"/* ]]; then holds=1; fi
    done
    [ "$holds" = 1 ] || drop+=("$target")
  done < <(findmnt --task "$pid" -rn -o TARGET,SOURCE)
  if [ ${#drop[@]} -gt 0 ]; then
    while read -r target; do
      nsenter --mount="/proc/$pid/ns/mnt" -- umount -l "$target" 2>/dev/null || true
    done < <(printf '%s\n' "${drop[@]}" | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-)
  fi
  export LODE_BENCH_MOUNT_TEMPLATE=$pid
}

# Ends the template (the EXIT trap's part; the shell may have no template yet).
stop_mount_template() {
  if [ -n "${LODE_BENCH_MOUNT_TEMPLATE:-}" ]; then kill -KILL "$LODE_BENCH_MOUNT_TEMPLATE" 2>/dev/null || true; fi
}
