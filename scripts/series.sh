#!/usr/bin/env bash
# Write the project's kernel series, every change and every new file, as
# git format-patch mails in build/series/ and as one mbox,
# build/series.mbox, for 'git am' on a clean Linux 6.12 tree.
#
# Usage: scripts/series.sh BUILD_DIR
set -euo pipefail

build=$(realpath -m "$1")
tree=$build/linux
out=$build/series

die() { echo "series: $*" >&2; exit 1; }
[ -d "$tree/.git" ] || die "$tree is missing: run 'make kernel-tree' first"

rm -rf "$out" "$build/series.mbox"
mkdir -p "$out"
count=$(git -C "$tree" rev-list --count base..series)
if [ "$count" -eq 0 ]; then
	: >"$build/series.mbox"
	echo "series: the series is empty (patch/series lists no patch)"
	exit 0
fi
git -C "$tree" format-patch -q --no-signature --zero-commit -o "$out" base..series
for p in "$out"/*.patch; do
	grep -q '^Signed-off-by: ' "$p" || die "$(basename "$p") has no Signed-off-by line"
	cat "$p" >>"$build/series.mbox"
done
echo "series: $count patches in $out (one mbox: $build/series.mbox)"
echo "series: apply with: git am $build/series.mbox   (on a clean 6.12 tree)"
