#!/usr/bin/env bash
# Where the upstream kubernetes-csi tools are for this checkout: sourced by prepare.sh, exports LODE_CSI_TOOLS when it finds them somewhere the code would not look by itself.
# The code looks at LODE_CSI_TOOLS, else at ../shared/tools/csi beside the checkout (the project's
# workplace keeps them there, outside the repository). A clone made somewhere else, under /tmp say,
# has nothing beside it; when it was cloned from a local checkout that has them beside it, those are
# its tools too, so `npm test` in such a clone runs what it runs in the checkout it came from.
# Sourced, not run: callers do `source scripts/csi-tools.sh` from the repository's root.
if [ -z "${LODE_CSI_TOOLS:-}" ] && [ ! -e ../shared/tools/csi ] && command -v git >/dev/null; then
  lode_origin=$(git config --get remote.origin.url 2>/dev/null || true)
  lode_origin=${lode_origin#file://}
  case "$lode_origin" in
    /*)
      if [ -e "$lode_origin/../shared/tools/csi" ]; then
        LODE_CSI_TOOLS=$(cd "$lode_origin/../shared/tools/csi" && pwd)
        export LODE_CSI_TOOLS
        echo "lode: the upstream kubernetes-csi tools are those beside the checkout this one was cloned from: $LODE_CSI_TOOLS" >&2
      fi
      ;;
  esac
  unset lode_origin
fi
