#!/usr/bin/env bash
# Prepare build/linux: a git tree holding a pristine Linux 6.12 as its base
# commit and the project's series (patch/series) applied on top of it.
#
# Usage: scripts/kernel-tree.sh BUILD_DIR [KSRC]
#
# The base is Debian's linux-source-6.12 tarball, or the clean 6.12 tree
# KSRC names.  The series is applied into a private git index, never into
# the work tree, and the work tree is then moved to the result with one
# checkout: only files whose content changed get a new mtime, so kbuild
# rebuilds only what the series really changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1")
ksrc=${2:-}
tarball=/usr/src/linux-source-6.12.tar.xz
tree=$build/linux
series=$top/patch/series

die() { echo "kernel-tree: $*" >&2; exit 1; }

git_() { git -C "$tree" -c user.name=idlebatch -c user.email=idlebatch@localhost "$@"; }

# A description of where the base comes from; a change forces a new base.
if [ -n "$ksrc" ]; then
	ksrc=$(realpath "$ksrc") || die "KSRC=$2 does not exist"
	[ -f "$ksrc/Makefile" ] || die "KSRC=$ksrc is not a kernel tree (no Makefile)"
	origin="tree $ksrc"
else
	[ -f "$tarball" ] || die "$tarball is missing: run 'make deps' (package linux-source-6.12)"
	origin="tarball $tarball $(stat -c '%s %Y' "$tarball")"
fi

check_version() {
	local v p
	v=$(sed -n 's/^VERSION = //p' "$1/Makefile" | head -n1)
	p=$(sed -n 's/^PATCHLEVEL = //p' "$1/Makefile" | head -n1)
	[ "$v.$p" = "6.12" ] ||
		die "$1 is Linux $v.$p, not 6.12: the series is for 6.12 only"
}

make_base() {
	# Refuse a wrong tree before the old one is thrown away.
	[ -z "$ksrc" ] || check_version "$ksrc"
	echo "kernel-tree: creating base tree in $tree from $origin"
	rm -rf "$tree"
	mkdir -p "$tree"
	if [ -n "$ksrc" ]; then
		rsync -a --exclude=/.git "$ksrc"/ "$tree"/
	else
		tar -xJf "$tarball" -C "$tree" --strip-components=1
	fi
	check_version "$tree"
	git_ init -q
	git_ config core.autocrlf false
	git_ config gc.auto 0
	git_ add -A -f
	local kv
	kv=$(make -s -C "$tree" kernelversion 2>/dev/null)
	GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git_ commit -q --no-verify -m "Linux $kv (base: $origin)"
	git_ tag -f base >/dev/null
	git_ update-ref refs/idlebatch/origin "$(echo "$origin" | git_ hash-object -w --stdin)"
}

current_origin=""
if git_ rev-parse -q --verify refs/idlebatch/origin >/dev/null 2>&1; then
	current_origin=$(git_ cat-file blob refs/idlebatch/origin)
fi
[ "$current_origin" = "$origin" ] || make_base

if [ -f "$tree/.config" ] || [ -d "$tree/include/config" ]; then
	die "$tree has build outputs in it (run 'make -C $tree mrproper'); builds use O= folders"
fi

# Apply the series into a private index, commit by commit.
index=$build/.series-index
rm -f "$index"
export GIT_INDEX_FILE=$index
git_ read-tree base
head=$(git_ rev-parse base)
work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f "$index"' EXIT

n=0
if [ -f "$series" ]; then
	while read -r name places; do
		case "$name" in ''|'#'*) continue ;; esac
		n=$((n + 1))
		patch=$top/patch/$name
		[ -f "$patch" ] || die "patch/series names $name, which does not exist"
		git mailinfo "$work/msg" "$work/diff" <"$patch" >"$work/info" ||
			die "$name is not a git format-patch mail"
		if [ -s "$work/diff" ] &&
		   ! git_ apply --cached --whitespace=nowarn "$work/diff" 2>"$work/err"; then
			echo "kernel-tree: patch $name does not apply to $(git_ log -1 --format=%s base)" >&2
			cat "$work/err" >&2
			# Show the hunk that failed, with its context, against the work tree copy.
			(cd "$tree" && git apply --check -v "$work/diff" 2>&1 |
				sed -n '/^error: while searching for:/,/^error:/p' | head -n 40) >&2 || true
			exit 1
		fi
		# New files that live outside patch/ (procfs/, tracepoints/).
		for place in $places; do
			src=${place%%:*}
			dst=${place#*:}
			[ -f "$top/$src" ] || die "patch/series: $name places $src, which does not exist"
			blob=$(git_ hash-object -w "$top/$src")
			git_ update-index --add --cacheinfo "100644,$blob,$dst"
		done
		field() { sed -n "s/^$1: //p" "$work/info" | head -n1; }
		subject=$(field Subject)
		[ -n "$subject" ] || die "$name has no Subject"
		{ echo "$subject"; echo; cat "$work/msg"; } >"$work/commit"
		treeid=$(git_ write-tree)
		head=$(GIT_AUTHOR_NAME=$(field Author) GIT_AUTHOR_EMAIL=$(field Email) \
			GIT_AUTHOR_DATE=$(field Date) GIT_COMMITTER_DATE=$(field Date) \
			git_ commit-tree "$treeid" -p "$head" -F "$work/commit")
	done <"$series"
fi
unset GIT_INDEX_FILE

# Move the work tree to the new head; untouched files keep their mtimes.
if [ "$(git_ rev-parse HEAD)" != "$head" ]; then
	if ! git_ diff --quiet HEAD || ! git_ diff --cached --quiet HEAD; then
		die "$tree has uncommitted changes; commit or export them (make export-patches) first"
	fi
	git_ checkout -q --detach "$head"
fi
git_ update-ref refs/heads/series "$head"
echo "kernel-tree: $tree at $(git_ log -1 --format='%h %s' HEAD) ($n patches)"
