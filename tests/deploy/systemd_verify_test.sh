#!/usr/bin/env bash
# `systemd-analyze verify` of the installed units (docs/deploy.md): the build
# is installed under a scratch root with systemd's own units beside ours,
# and verify must pass without a word, since it reports bad settings as
# warnings and exits 0. It checks syntax and references (the binaries
# exist where ExecStart says); no systemd runs here, so the units'
# behaviour is not tested.
#   systemd_verify_test.sh CMAKE BUILD_DIR
set -euo pipefail
cmake=$1 build=$2
root=$(mktemp -d /tmp/ts_systemd_XXXXXX)
trap 'rm -rf "$root"' EXIT
DESTDIR=$root "$cmake" --install "$build" > /dev/null
prefix=$("$cmake" -L -N "$build" | sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p')
units=("$root$prefix"/lib/systemd/system/torchsweep-*)
[ ${#units[@]} -eq 4 ] || { echo "expected 4 units under $prefix/lib/systemd/system, found ${units[*]}"; exit 1; }
mkdir -p "$root/usr/lib/systemd/system"
cp -a /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
output=$(systemd-analyze verify --man=no --root="$root" "${units[@]}" 2>&1) || { echo "$output"; exit 1; }
[ -z "$output" ] || { echo "systemd-analyze verify said:"; echo "$output"; exit 1; }
echo "verified: ${units[*]#"$root"}"
