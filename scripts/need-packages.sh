# shellcheck shell=bash
# Sourced by scripts/deps.sh and the build scripts: Debian package checks
# and installs, in one place.
#
#   missing_packages PKG...     prints those of PKG that are not installed
#   install_packages NAME PKG...
#                               installs PKG (refreshing the package lists
#                               once if the first try fails); exits 1 if
#                               it cannot
#   need_packages NAME PKG...   makes sure PKG are installed: as root it
#                               installs the missing ones; otherwise it
#                               says which are missing and how to install
#                               them, and exits 1
# NAME prefixes the messages.
missing_packages() {
	local pkg status
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
		[ "$status" = "install ok installed" ] || echo "$pkg"
	done
}

install_packages() {
	local name=$1
	shift
	echo "$name: installing $*"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null; then
		echo "$name: apt-get install failed; refreshing package lists and retrying" >&2
		apt-get update -qq </dev/null
		apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null || {
			echo "$name: apt-get install $* failed" >&2
			exit 1
		}
	fi
}

need_packages() {
	local name=$1 missing
	shift
	mapfile -t missing < <(missing_packages "$@")
	[ ${#missing[@]} -gt 0 ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$name: these Debian packages are missing: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
		exit 1
	fi
	install_packages "$name" "${missing[@]}"
}
