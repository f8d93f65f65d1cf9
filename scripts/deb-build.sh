#!/usr/bin/env bash
# Build Debian packages of the patched kernel (make deb): linux-image,
# linux-headers (when the configuration has modules) and linux-libc-dev,
# with the kernel's own bindeb-pkg, into BUILD_DIR/deb/.
#
# Usage: scripts/deb-build.sh BUILD_DIR [KCONFIG]
#   KCONFIG  the configuration to start from (a .config, or one compressed
#            with xz).  Default: the running kernel's /boot/config-$(uname
#            -r) when that is a 6.12 kernel, otherwise Debian's own
#            (linux-config-6.12, config.amd64_none_amd64).
#
# CONFIG_SCHED_IDLEBATCH is forced on; everything else is KCONFIG's, but
# for the keys of whoever built it: the module signing key, the trusted
# and revoked keys and the build salt take the kernel's defaults, so the
# build makes a throwaway signing key of its own.  The release is
# VERSION-idlebatch (LOCALVERSION) and the package version
# VERSION-idlebatchN, N the series' patch count (IDLEBATCH_PKGREV=
# overrides the whole package version).  No debug-symbol package.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1")
kconfig=${2:-}
tree=$build/linux
die() { echo "deb: $*" >&2; exit 1; }
[ -d "$tree/.git" ] || die "$tree is missing: run 'make kernel-tree' first"
command -v dpkg-buildpackage >/dev/null && command -v dh_prep >/dev/null ||
	die "dpkg-dev and debhelper are needed: run 'make deps' as root"

if [ -z "$kconfig" ]; then
	running=$(uname -r)
	if [[ $running == 6.12.* ]] && [ -r "/boot/config-$running" ]; then
		kconfig=/boot/config-$running
	else
		kconfig=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
		[ -r "$kconfig" ] || die "no 6.12 configuration: install linux-config-6.12 (make deps) or give KCONFIG=FILE"
	fi
fi
[ -r "$kconfig" ] || die "cannot read the configuration $kconfig"

mkdir -p "$build/deb"
base=$build/deb/base.config
# xz -f passes a plain file through
xz -dcf "$kconfig" | grep -vE '^CONFIG_(MODULE_SIG_KEY|SYSTEM_TRUSTED_KEYS|SYSTEM_REVOCATION_KEYS|BUILD_SALT)=' >"$base"
grep -q '^CONFIG_' "$base" || die "$kconfig is not a kernel configuration"
grep -qE '^CONFIG_(X86_64|64BIT)=y' "$base" || die "$kconfig is not an x86-64 configuration"

modules=$(grep -c '=m$' "$base" || true)
version=$(make -s -C "$tree" kernelversion)
patches=$(git -C "$tree" rev-list --count base..HEAD)
# The release says idlebatch once: the configuration may say it already
# (the test kernel's does).  LOCALVERSION set, even empty, also drops the
# "+" that marks a tree with commits after its release.
if grep -q '^CONFIG_LOCALVERSION=".*idlebatch' "$base"; then
	export LOCALVERSION=
else
	export LOCALVERSION=-idlebatch
fi
export KDEB_PKGVERSION=${IDLEBATCH_PKGREV:-$version-idlebatch$patches}
export DPKG_FLAGS=-Ppkg.linux-upstream.nokerneldbg
export KDEB_CHANGELOG_DIST=${KDEB_CHANGELOG_DIST:-unstable}
export DEBEMAIL=${DEBEMAIL:-idlebatch@localhost} DEBFULLNAME=${DEBFULLNAME:-IdleBatch kernel build}

echo "deb: building the idle-batch kernel's packages ($KDEB_PKGVERSION) from $kconfig"
echo "deb: $(grep -c '=y$' "$base") options built in and $modules modules, on $(nproc) CPUs.  The test"
echo "deb: configuration (no modules) took 21 minutes on 2 busy CPUs; a distribution's builds"
echo "deb: every one of its modules too, many times longer"
rm -f "$build"/*.deb "$build"/*.buildinfo "$build"/*.changes "$build/deb/"*.deb
BASE_CONFIG=$base DEBUG_CONFIG=0 KBUILD_TARGET=bindeb-pkg \
	"$top/scripts/kernel-build.sh" "$build" asis deb "$top/tests/config/deb.config"
mv -f "$build"/*.deb "$build/deb/"
rm -f "$build"/*.buildinfo "$build"/*.changes
echo "deb: the packages, in $build/deb/ ($SECONDS s):"
ls -1 "$build/deb/"*.deb | sed 's/^/  /'
echo "deb: install with: sudo apt install $(ls "$build/deb/"linux-image-*.deb | head -n 1)$(ls "$build/deb/"linux-headers-*.deb 2>/dev/null | head -n 1 | sed 's/^/ /'); then reboot"
