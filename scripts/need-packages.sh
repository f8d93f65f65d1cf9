# shellcheck shell=bash
# Sourced by the build scripts: need_packages NAME PKG... makes sure the
# Debian packages PKG are installed.  As root it installs the missing ones
# (refreshing the package lists once if the first try fails); otherwise it
# says which are missing and how to install them, and exits 1.  NAME
# prefixes the messages.
need_packages() {
	local name=$1 pkg status missing=()
	shift
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
		[ "$status" = "install ok installed" ] || missing+=("$pkg")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$name: these Debian packages are missing: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
		exit 1
	fi
	echo "$name: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null; then
		echo "$name: apt-get install failed; refreshing package lists and retrying" >&2
		apt-get update -qq </dev/null
		apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null || {
			echo "$name: apt-get install ${missing[*]} failed" >&2
			exit 1
		}
	fi
}
