#!/usr/bin/env bash
# Write the commits on top of 'base' in build/linux back into patch/ and
# patch/series (for developers who edit and commit in build/linux).
# Files that patch/series places from procfs/ or tracepoints/ are copied
# back there and left out of the patch mails, as the series expects.
#
# Usage: scripts/export-patches.sh BUILD_DIR
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1")
tree=$build/linux
series=$top/patch/series

die() { echo "export-patches: $*" >&2; exit 1; }
[ -d "$tree/.git" ] || die "$tree is missing: run 'make kernel-tree' first"
git -C "$tree" diff --quiet HEAD || die "$tree has uncommitted changes: commit them first"

# dst (tree path) -> src (repository path) of every placed file
declare -A placed=()
header=""
if [ -f "$series" ]; then
	header=$(sed -n '/^#/p' "$series")
	while read -r name places; do
		case "$name" in ''|'#'*) continue ;; esac
		for place in $places; do
			placed[${place#*:}]=${place%%:*}
		done
	done <"$series"
fi

excludes=()
for dst in "${!placed[@]}"; do
	excludes+=(":(exclude)$dst")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
: >"$tmp/series"
[ -z "$header" ] || echo "$header" >"$tmp/series"
for c in $(git -C "$tree" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	file=$(git -C "$tree" format-patch --no-signature --zero-commit \
		--start-number "$n" -o "$tmp/patches" -1 "$c" -- . "${excludes[@]}")
	line=$(basename "$file")
	for dst in $(git -C "$tree" diff-tree --no-commit-id --name-only -r "$c"); do
		src=${placed[$dst]:-}
		[ -n "$src" ] || continue
		git -C "$tree" show "$c:$dst" >"$top/$src"
		line="$line $src:$dst"
	done
	echo "$line" >>"$tmp/series"
done

mkdir -p "$top/patch"
rm -f "$top"/patch/*.patch
[ $n -eq 0 ] || cp "$tmp"/patches/*.patch "$top/patch/"
cp "$tmp/series" "$series"
echo "export-patches: $n patches written to patch/"
