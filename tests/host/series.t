#!/usr/bin/env bash
# 'make series' output is what a user applies: it must apply with 'git am'
# to a freshly unpacked Linux 6.12, give exactly the tree the project
# builds and boots (build/linux), carry a Signed-off-by in every patch and
# pass checkpatch.pl --strict.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
tree=$build/linux
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }

if [ ! -d "$tree/.git" ]; then
	notok "build/linux exists (run 'make kernel-tree')"
	echo "1..$n"
	exit 1
fi

make -s -C "$top" series >/dev/null
check "make series succeeds" test -f "$build/series.mbox"

fresh=$(mktemp -d "$build/series-check.XXXXXX")
cp=$(mktemp -d "$build/series-checkpatch.XXXXXX")
trap 'rm -rf "$fresh" "$cp"' EXIT

# checkpatch.pl takes about 2 s a patch: run it on every CPU, from the
# project's tree (the series leaves scripts/ as 6.12 has it), while the
# fresh tree is unpacked and the series applied to it below.  Debian's
# python3 has the ply module that checkpatch's SPDX check needs.
find "$build/series" -name '*.patch' -print0 |
	xargs -0 -r -P "$(nproc)" -I{} sh -c 'cd "$1" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl \
		--strict -q --no-summary "$2" >"$3/$(basename "$2").raw" 2>&1; exit 0' _ "$tree" {} "$cp" &
checkpatch=$!
origin=$(git -C "$tree" cat-file blob refs/idlebatch/origin)
case "$origin" in
tarball\ *)
	set -- $origin
	tar -xJf "$2" -C "$fresh" --strip-components=1 ;;
tree\ *)
	rsync -a --exclude=/.git "${origin#tree }"/ "$fresh"/ ;;
esac
g() { git -C "$fresh" -c user.name=t -c user.email=t@localhost "$@"; }
g init -q && g add -A -f && g commit -q -m base
check "a freshly unpacked 6.12 tree is the project's base tree" \
	test "$(g rev-parse HEAD^{tree})" = "$(git -C "$tree" rev-parse base^{tree})"

patches=("$build"/series/*.patch)
[ -e "${patches[0]}" ] || patches=()
if [ ${#patches[@]} -gt 0 ]; then
	check "the series (${#patches[@]} patches) applies with git am" \
		g am -q --whitespace=error-all "$build/series.mbox"
else
	ok "the series applies with git am # SKIP patch/series lists no patch yet"
fi
check "the result is exactly the tree the project builds and boots (so it builds)" \
	test "$(g rev-parse HEAD^{tree})" = "$(git -C "$tree" rev-parse series^{tree})"

wait $checkpatch
for p in "${patches[@]}"; do
	name=$(basename "$p")
	check "$name has a Signed-off-by" grep -q '^Signed-off-by: ' "$p"
	git mailinfo "$fresh/msg" "$fresh/diff" <"$p" >/dev/null 2>&1
	body=$(grep -vcE '^(Signed-off-by:|$)' "$fresh/msg")
	check "$name has a commit message body" test "$body" -gt 0
	# Known false positives: checkpatch reads the linker-script input
	# section pattern "*(__batch_sched_class)" as a multiplication, as it
	# does for every line of SCHED_DATA in vmlinux.lds.h; and it takes the
	# TRACE_EVENT() layout of trace headers (TP_STRUCT__entry( on a line of
	# its own, fields aligned in columns) for misaligned C, as it does in
	# every header of include/trace/events/ (sched.h: 90 such checks).
	if [ ! -f "$cp/$name.raw" ]; then
		notok "$name passes checkpatch.pl --strict (checkpatch did not run on it)"
		continue
	fi
	awk -v RS= -v ORS='\n\n' '
		!(/spaces preferred around that .\*./ && /include\/asm-generic\/vmlinux\.lds\.h/) &&
		!(/^CHECK: (Alignment should match open parenthesis|Lines should not end with a .\(.)/ &&
		  /FILE: include\/trace\/events\//)' \
		"$cp/$name.raw" >"$fresh/cp.out"
	if [ ! -s "$fresh/cp.out" ] || ! grep -q '[^[:space:]]' "$fresh/cp.out"; then
		ok "$name passes checkpatch.pl --strict"
	else
		notok "$name passes checkpatch.pl --strict"
		sed 's/^/# /' "$fresh/cp.out"
	fi
done
echo "1..$n"
