#!/usr/bin/env bash
# Install the Debian packages the project needs; quiet when all are present.
#
# Usage: scripts/deps.sh [--check] [--gui] [--distro]
#   --check  only report what is missing (exit 1 if anything is)
#   --gui    also KernelShark itself, Xvfb and the screenshot tools
#            (make screenshot; not needed to build or test)
#   --distro also Debian's kernel configurations (make kernel-distro), and
#            crun and systemd for the tests of services and containers on it
#   --deb    also what make deb needs: debhelper and Debian's configurations
set -euo pipefail

packages=(
	# kernel build
	build-essential flex bison bc libelf-dev libssl-dev cpio kmod dwarves
	xz-utils ccache git rsync perl python3 python3-ply python3-git
	# kernel source (6.12, Debian's stable tree)
	linux-source-6.12
	# test bed
	qemu-system-x86 busybox-static util-linux procps
	# tracing and the tools/plugins
	trace-cmd libtraceevent-dev libtracefs-dev libtracecmd-dev linux-perf bpftrace
	libkshark-dev libjson-c-dev libncurses-dev pkg-config
	# workloads for tests and benchmarks
	stress-ng rt-tests trinity redis-server redis-tools gnuplot-nox libcap-dev libzstd-dev
)

check=false
for arg in "$@"; do
	case $arg in
	--check) check=true ;;
	--gui) packages+=(kernelshark xvfb xauth x11-apps netpbm) ;;
	--distro) packages+=(linux-config-6.12 crun systemd) ;;
	--deb) packages+=(dpkg-dev debhelper linux-config-6.12) ;;
	*) echo "usage: $0 [--check] [--gui] [--distro] [--deb]" >&2; exit 2 ;;
	esac
done

# shellcheck source=scripts/need-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/need-packages.sh"
mapfile -t missing < <(missing_packages "${packages[@]}")

[ ${#missing[@]} -eq 0 ] && exit 0

if $check; then
	echo "missing packages: ${missing[*]}" >&2
	exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: these Debian packages are missing: ${missing[*]}" >&2
	echo "deps: run 'sudo make deps' (or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi

install_packages deps "${missing[@]}"
