# Sourced by the scripts in this folder: where the reference environment is
# and how to tell whether this host already is one.

TS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# The build root lives outside the repository so that fresh clones, CI and
# later sessions on the same machine reuse it.
TS_BUILDROOT=${TORCHSWEEP_BUILDROOT:-/var/lib/torchsweep/buildroot-trixie}
TS_SUITE=trixie
# The compiler cache every clone shares, inside the build root (or natively
# on a Debian 13 host): outside any clone, so fresh clones and CI reuse it.
TS_CCACHE_DIR=/var/cache/torchsweep/ccache
TS_MIRROR=${TORCHSWEEP_MIRROR:-http://deb.debian.org/debian}
# Overridden by scripts/cuda-compile-check for its own root.
TS_COMPONENTS=${TORCHSWEEP_COMPONENTS:-main}
TS_PACKAGE_LIST=${TORCHSWEEP_PACKAGE_LIST:-$TS_REPO/scripts/packages.txt}

ts_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
ts_die() { ts_log "error: $*"; exit 1; }

# True when the host itself is Debian 13 or newer: then no build root is used.
ts_host_is_reference() {
  [ "${TORCHSWEEP_NATIVE:-}" = 1 ] && return 0
  [ "${TORCHSWEEP_FORCE_BUILDROOT:-}" = 1 ] && return 1
  [ -r /etc/os-release ] || return 1
  local id version
  id=$(. /etc/os-release && echo "${ID:-}")
  version=$(. /etc/os-release && echo "${VERSION_ID:-}")
  [ "$id" = debian ] || return 1
  # testing/sid have no VERSION_ID but are newer than 13
  [ -z "$version" ] && return 0
  [ "${version%%.*}" -ge 13 ]
}

# Lists every mount point at or below $1, as the current mount namespace sees it.
ts_mounts_below() {
  local dir
  dir=$(realpath -m "$1")
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo
}

# The package names, without comments (a line may end in a tag: "NAME  # image").
ts_packages() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TS_PACKAGE_LIST" | grep -v '^$'; }
# One compiler cache for every clone on this machine (CI's fresh clones
# too), kept outside them: paths are hashed relative to the clone, so a
# clone elsewhere hits what another compiled with the same flags
# (docs/build.md). Builds add -DCMAKE_CXX_COMPILER_LAUNCHER=ccache.
ts_use_compiler_cache() {
  export CCACHE_DIR=${CCACHE_DIR:-$TS_CCACHE_DIR} CCACHE_BASEDIR=$TS_REPO CCACHE_NOHASHDIR=true \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime \
    CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
}

ts_packages_stamp() { sha256sum "$TS_PACKAGE_LIST" | cut -d' ' -f1; }

# The PyTorch a lent GPU machine runs (scripts/gpu-node-wheels.txt: the CUDA
# 13.0 wheel and the three libraries its libraries need that the host's CUDA
# toolkit lacks), installed on the plain host, outside the build root, for
# building the worker against it. Prints the site folder (torch/ inside).
# The first time downloads about 760 MB; sha256s checked by pip.
ts_host_torch_site() {
  local wheels=${TORCHSWEEP_HOST_WHEELS:-/var/cache/torchsweep/host-wheels}
  local site=/var/cache/torchsweep/torch-2.11-host want
  want=$(sha256sum "$TS_REPO/scripts/gpu-node-wheels.txt" | cut -d' ' -f1)
  if [ "$(cat "$site/.torchsweep-wheels" 2>/dev/null)" != "$want" ]; then
    mkdir -p "$wheels"
    ts_log "installing scripts/gpu-node-wheels.txt into $site (first time: a 760 MB download)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$wheels" \
      -r "$TS_REPO/scripts/gpu-node-wheels.txt" >&2
    rm -rf "$site"
    python3 -m pip install --quiet --no-deps --no-index --find-links "$wheels" --target "$site" \
      -r "$TS_REPO/scripts/gpu-node-wheels.txt" >&2
    echo "$want" > "$site/.torchsweep-wheels"
  fi
  echo "$site"
}
