#!/usr/bin/env bash
# Prints, from node's TAP output on standard input, each failed or cancelled test with its diagnostic block.
# `npm test` ends with this for both parts of the run, so a failure is on the last screen (and in the
# tail CI keeps) instead of thousands of lines above the other part's report. A block is cut after
# LODE_TAP_FAILURE_LINES lines (default 40): the assertion and its place come first in it.
set -euo pipefail
max=${LODE_TAP_FAILURE_LINES:-40}
case "$max" in ''|*[!0-9]*|0) echo "LODE_TAP_FAILURE_LINES must be a whole number of at least 1, not '$max'" >&2; exit 2 ;; esac
# A block opens at "not ok" and closes at the "..." indented two more than it; a test's own
# nested "ok" lines inside are not printed since printing stops at the close.
awk -v max="$max" '
  !open && /^ *not ok / {
    open = 1; lines = 0; match($0, /^ */); endline = sprintf("%" (RLENGTH + 2) "s...", "")
    found++
  }
  open {
    if (lines < max) print
    else if (lines == max) print "  (cut)"
    lines++
    if ($0 == endline) open = 0
  }
  END { if (!found) print "(none)" }
'
