#!/usr/bin/env bash
# `npm test`: builds, then runs every test file with node's test runner, the host files two at a time
# (they attach loop devices and mount filesystems, which needs root), the VM part beside them.
source "$(dirname "$0")/prepare.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "lode tests need root: they attach loop devices and mount filesystems (run: sudo npm test)" >&2
  exit 1
fi
# Before any test mounts anything: the mount namespace the benches' nodes copy theirs from
# (scripts/mount-template.sh), so none of them holds another test file's filesystems.
source scripts/mount-template.sh
start_mount_template
# `|| true` as in the trap below: under `set -e` a failing command in a trap ends the script with 1.
trap 'stop_mount_template || true' EXIT
# A test file that hangs (a watch that never delivers, a pod that never runs) is cancelled, which
# fails the run, instead of stalling it: node's --test-timeout bounds each file given to the runner.
# The longest host file (the demo with the real sidecars) takes about 5 minutes here, the VM part
# (one file) under an hour.
host_timeout=(--test-timeout=1200000)
vm_timeout=(--test-timeout=4800000)
# Host files run two at a time (LODE_TEST_JOBS=N for another number; 1 for the old order): each
# mounts, attaches and serves under a temporary root of its own, and most of a file's time is spent
# waiting on its driver processes and the disk, not the CPU. `npm run test:quick` took 11 min 54 s
# one at a time and 7 min 21 s two at a time on the 2-core development machine (docs/development.md).
jobs=${LODE_TEST_JOBS:-2}
case "$jobs" in ''|*[!0-9]*|0) echo "LODE_TEST_JOBS must be a whole number of at least 1, not '$jobs'" >&2; exit 2 ;; esac
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
if [ $# -gt 0 ]; then
  for f in "$@"; do case "$f" in *vm/guest-storage.test.*) host_timeout=("${vm_timeout[@]}") ;; esac; done
  exec node --test --test-concurrency=1 "${host_timeout[@]}" "$@"
fi
# Every test file except the guest tests, which only make sense inside the test VM: the host tests in
# dist/test/vm/ boot it and run them there.
mapfile -t files < <(find dist/test -path dist/test/vm-guest -prune -o -name '*.test.js' -print | sort)
# The VM part (all guest files, in VMs of their own) runs beside the host files, not after them:
# it keeps the emulator busy while the host files mostly wait on the disk, and it shares nothing
# with them (its own kernel, devices and mounts). LODE_TEST_SERIAL=1 runs it after them instead.
vm_file=dist/test/vm/guest-storage.test.js
# `npm run test:quick`: the host files without those that boot a VM, build and run the image, or run
# the real sidecars (the VM's own checks, the image's, the real-sidecar demo and the differential).
if [ "$quick" = 1 ]; then
  quick_files=()
  for f in "${files[@]}"; do
    case "$f" in
      "$vm_file"|dist/test/vm/harness.test.js|dist/test/vm/any-path.test.js|dist/test/image/*|dist/test/bench/real-sidecars.test.js|dist/test/bench/differential.test.js) ;;
      *) quick_files+=("$f") ;;
    esac
  done
  exec node --test --test-concurrency="$jobs" "${host_timeout[@]}" "${quick_files[@]}"
fi
if [ "${LODE_TEST_SERIAL:-0}" = 1 ]; then
  exec node --test --test-concurrency=1 "${vm_timeout[@]}" "${files[@]}"
fi
host_files=()
vm_host_files=()
for f in "${files[@]}"; do
  case "$f" in
    "$vm_file") ;;
    dist/test/vm/*) vm_host_files+=("$f") ;;
    *) host_files+=("$f") ;;
  esac
done
vm_log=$(mktemp /tmp/lode-vm-part-XXXXXX.log)
# The host files' report is also kept, so that the run can end with the failures of both parts.
host_log=$(mktemp /tmp/lode-host-part-XXXXXX.log)
# A session of its own, so that stopping the tests stops the VMs too (a background job of a script
# does not get the terminal's Ctrl-C): the trap signals its whole process group, qemu included.
# After the guest files the same session runs the host files of test/vm/ (two of them boot a VM of
# their own, about a minute in all), one at a time: so no third VM boots beside the VM part's two,
# which is more than this machine's two cores carry within the (unstretched) boot bound. Which side
# ends first varies from run to run on the 2-core machine (VM part 25 min 35 s against host files
# 27 min 38 s in one full run, 26 min 22 s against 25 min 33 s in the next), so this order saves
# that minute in the runs where the VM part ends first and costs it in the others.
setsid bash -c 'rc=0
  node --test "$1" "$2" || rc=$?
  shift 2
  if [ $# -gt 1 ]; then node --test --test-concurrency=1 "$@" || rc=$?; fi
  exit "$rc"' vm-part "${vm_timeout[@]}" "$vm_file" "${host_timeout[@]}" "${vm_host_files[@]}" >"$vm_log" 2>&1 &
vm_pid=$!
# `|| true`: under prepare.sh's `set -e` a failing command in the trap ends the script with 1, and
# the kill fails whenever the VM part has already ended, as it normally has: green runs exited 1.
trap 'kill -TERM -- "-$vm_pid" 2>/dev/null || true; rm -f "$vm_log" "$host_log"; stop_mount_template || true' EXIT
trap 'exit 130' INT TERM
echo "# the VM part ($vm_file, then the other files of dist/test/vm/) runs beside the host files; its report follows theirs"
host_rc=0
# The host files at a lower priority than the VM part: they mostly wait on the disk, while the
# emulator needs the processor the whole time and has become the longer part (33 min against
# 26 min for the host files two at a time, at equal priority, on the 2-core machine).
# Shown as node would by default (spec on a terminal, TAP otherwise), and as TAP into the log.
shown=tap
if [ -t 1 ]; then shown=spec; fi
nice -n 5 node --test --test-concurrency="$jobs" "${host_timeout[@]}" \
  --test-reporter="$shown" --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination="$host_log" \
  "${host_files[@]}" || host_rc=$?
vm_rc=0
wait "$vm_pid" || vm_rc=$?
echo "# the VM part ($vm_file, then the other files of dist/test/vm/), which ran beside the host files:"
cat "$vm_log"
# The failures last: the host files' report is thousands of lines above the end by now.
echo "# failed or cancelled tests of the host files:"
bash scripts/tap-failures.sh <"$host_log"
echo "# failed or cancelled tests of the VM part:"
bash scripts/tap-failures.sh <"$vm_log"
echo "# host files: exit $host_rc; the VM part: exit $vm_rc"
[ "$host_rc" = 0 ] && [ "$vm_rc" = 0 ]
