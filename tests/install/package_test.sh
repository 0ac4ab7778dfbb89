#!/usr/bin/env bash
# The Debian package, installed into a fresh Debian 13 root (docs/deploy.md):
# cpack builds the .deb from this build; debootstrap makes a minimal trixie
# root; apt installs the package there with the dependencies it declares;
# `torchsweep run` of the installed CPU example must then succeed from the
# installed files alone and write its report.
#   package_test.sh CPACK BUILD_DIR
# The minimal root's tarball and apt's downloads are kept under
# $TS_PACKAGE_TEST_CACHE (default /var/cache/torchsweep-package-test), so
# only the first run on a machine downloads; every run unpacks a new root.
set -euo pipefail
cpack=$1 build=$2
cache=${TS_PACKAGE_TEST_CACHE:-/var/cache/torchsweep-package-test}
# The mirror and suite this (build) root was made from.
read -r _ mirror suite components < <(grep -m1 '^deb ' /etc/apt/sources.list)
work=$(mktemp -d /var/tmp/ts_package_XXXXXX)
cleanup() {
  # Nothing is mounted under $work any more: the mounts lived in the mount
  # namespace below, which is gone. Checked anyway: a bound /dev would be
  # deleted with it.
  if grep -q " $work" /proc/self/mounts; then
    echo "mounts left under $root; not removing it" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT

(cd "$build" && "$cpack" -G DEB -B "$work/package" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/package/torchsweep_*.deb)
echo "built $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"

mkdir -p "$cache/archives/partial"
# In a mount namespace of its own, private: what debootstrap and the chroot
# mount (/proc, /dev, apt's cache) is unmounted when it ends, whatever
# happens. In the build root (a chroot in scripts/env-run's private mount
# namespace) / cannot be made private and needs not be: every mount there
# is private already; $work is bound onto itself and made private anyway.
propagation=private
unshare --mount --propagation private true 2> /dev/null || propagation=unchanged
unshare --mount --propagation "$propagation" bash -euo pipefail -c '
  work=$1 cache=$2 deb=$3 mirror=$4 suite=$5 components=$6
  root=$work/root tarball=$cache/$suite-minbase.tar.gz
  mount --bind "$work" "$work"
  mount --make-rprivate "$work"
  if [ ! -f "$tarball" ]; then
    debootstrap --variant=minbase --include=ca-certificates --make-tarball="$tarball.partial" "$suite" \
      "$work/tarball" "$mirror" > "$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }
    mv "$tarball.partial" "$tarball"
  fi
  debootstrap --variant=minbase --include=ca-certificates --unpack-tarball="$tarball" "$suite" "$root" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }
  printf "deb %s %s %s\n" "$mirror" "$suite" "$components" > "$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  printf "#!/bin/sh\nexit 101\n" > "$root/usr/sbin/policy-rc.d"  # no service starts in the root
  chmod 755 "$root/usr/sbin/policy-rc.d"
  # A root thrown away after the test: dpkg need not sync each unpacked file to disk.
  echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
  cp "$deb" "$root/tmp/"
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --make-rprivate "$root/dev"
  mount --bind "$cache/archives" "$root/var/cache/apt/archives"
  chroot "$root" apt-get update -qq
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "/tmp/$(basename "$deb")" > "$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; exit 1; }
  echo "installed into a fresh $(. "$root/etc/os-release" && echo "$PRETTY_NAME") root"
  # From the installed files alone: the example from the package, a store in /tmp.
  chroot "$root" sh -c "cd /tmp && torchsweep run /usr/share/torchsweep/examples/cpu-quick.yaml --db /tmp/q.db \
    --peak-probe off" > "$work/run.log" 2>&1 || { tail -40 "$work/run.log"; exit 1; }
  grep -q "Compiled vs eager" "$work/run.log" || { cat "$work/run.log"; exit 1; }
  test -s "$root/tmp/q.report.html" || { echo "no report beside the store"; exit 1; }
  # Listed to a file first: under pipefail, grep -q leaving early would fail dpkg with SIGPIPE.
  chroot "$root" dpkg -L torchsweep > "$work/files.txt"
  grep -qx "/usr/lib/systemd/system/torchsweep-nightly.timer" "$work/files.txt" \
    || { echo "the package lacks the nightly timer"; exit 1; }
' sh "$work" "$cache" "$deb" "$mirror" "$suite" "$components"
echo "the installed package ran examples/cpu-quick.yaml and wrote its report"
